-- Host tools (SPEC "Workspace and host tools", "Interactive runs"). `tools` is
-- the run's tool list as POST /runs gave it (webhook URLs included: the runner
-- never sees them); NULL when the run has none.
ALTER TABLE run ADD COLUMN tools TEXT;

-- One row per host tool call the harness asked for (its `tool-input-available`
-- chunk, stored in `events` in the same transaction). The outcome is written
-- here before it is forwarded to the runner, so an object restart between the
-- two forwards the same outcome again instead of asking anyone twice; a
-- webhook call cut by a restart is made again with the same Idempotency-Key
-- (the tool call id).
CREATE TABLE tool_calls (
  tool_call_id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  -- 'webhook' and 'client' as the run's tools say; 'unknown' for a name the run has no tool of.
  kind TEXT NOT NULL CHECK (kind IN ('webhook', 'client', 'unknown')),
  input TEXT NOT NULL,
  requested_seq INTEGER NOT NULL,
  requested_at INTEGER NOT NULL,
  -- JSON `{output}` or `{error}`; NULL while the call waits.
  outcome TEXT,
  answered_at INTEGER,
  -- When the runner took the outcome; NULL until then (the alarm retries).
  delivered_at INTEGER,
  -- Webhook requests started, across restarts.
  attempts INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
