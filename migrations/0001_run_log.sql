-- The run object's log. One object holds one run, so `run` has a single row.
-- Nothing secret is stored here: `request` is the runner request (messages,
-- harness, options), which never carries a key.
CREATE TABLE run (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  run_id TEXT NOT NULL,
  thread_id TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'failed', 'aborted')),
  started_at INTEGER NOT NULL,
  finished_at INTEGER,
  updated_at INTEGER NOT NULL,
  error TEXT,
  request TEXT NOT NULL,
  request_hash TEXT NOT NULL
);

-- One row holds the consecutive seqs first_seq..last_seq, their chunks as
-- newline-separated JSON (a chunk never contains a raw newline). Grouping
-- many chunks per row is what keeps the rows-written bill low; the
-- INTEGER PRIMARY KEY is the rowid, so no index is written besides it.
CREATE TABLE events (
  first_seq INTEGER PRIMARY KEY,
  last_seq INTEGER NOT NULL CHECK (last_seq >= first_seq),
  chunks TEXT NOT NULL,
  appended_at INTEGER NOT NULL
);
