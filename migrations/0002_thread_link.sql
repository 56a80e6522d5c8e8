-- A run belongs to a thread: the thread object's name (tenant-qualified), the
-- sandbox the run executes in (one per thread unless reuse is off), and when
-- the thread was told the run ended (NULL until it acknowledged).
ALTER TABLE run ADD COLUMN thread_key TEXT;
ALTER TABLE run ADD COLUMN sandbox_id TEXT;
ALTER TABLE run ADD COLUMN thread_notified_at INTEGER;
