-- The thread object's state. One object holds one thread (a conversation);
-- each run is one turn.
CREATE TABLE thread (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  thread_id TEXT NOT NULL,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  active_run_id TEXT,
  -- The thread's sandbox: its generation and when it was first used.
  sandbox_generation INTEGER NOT NULL DEFAULT 0,
  sandbox_started_at INTEGER
);

-- The turns, in order. user_messages are the messages the turn added.
CREATE TABLE runs (
  position INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL UNIQUE,
  run_key TEXT NOT NULL,
  status TEXT NOT NULL,
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  user_messages TEXT NOT NULL
);

-- The transcript as TanStack AI ModelMessages, harness tool calls included.
CREATE TABLE messages (
  position INTEGER PRIMARY KEY,
  message TEXT NOT NULL
);
