-- The tenant object's state: the runs of one tenant that hold a slot
-- (MAX_ACTIVE_RUNS). A row is written when a run is admitted and deleted
-- when it ends; lease_until bounds a slot whose release never arrived.
CREATE TABLE active_runs (
  run_id TEXT PRIMARY KEY,
  -- The request that took the slot: only it may give the slot back before
  -- the run exists (a concurrent retry of the same run must not).
  holder TEXT NOT NULL,
  admitted_at INTEGER NOT NULL,
  lease_until INTEGER NOT NULL
);
