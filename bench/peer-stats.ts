/**
 * What every peer of the benchmark reports about one run, over the bench
 * routes. No runtime imports: the Worker and the Node orchestrator share it.
 */
export interface PeerStats {
  runId: string;
  /** `running`, or the terminal status in the peer's own vocabulary. */
  status: string;
  terminal: boolean;
  lastSeq: number;
  /** The harness's `timestamp` on seq 0 (epoch ms, the runner machine's clock). */
  firstTimestamp: number | null;
  /** When the peer made the run terminal (epoch ms, workerd's clock: the same machine). */
  finishedAt: number | null;
  /** SQL rows written (cursor `rowsWritten`), or keys written for the key-value layout; alarms not included. */
  rowsWritten: number;
  rowsRead: number;
  /** `setAlarm` calls: billed as one row written each. */
  alarmsSet: number;
  /** Storage transactions / SQL statements the peer issued. */
  statements: number;
  /** `ctx.storage.sql.databaseSize`: the whole object's database. */
  databaseSize: number;
  /** The chunks' JSON text as received, summed (bytes); `null` when the peer cannot tell. */
  payloadBytes: number | null;
  /** Rows holding events (the SQLite layout); `null` for the key-value layout. */
  eventRows: number | null;
  /** Ours only: rows and calls per SQL statement (the bench's own reads included), to see where rows go. */
  byStatement?: Record<string, { calls: number; rowsWritten: number; rowsRead: number }>;
  /** Ours only: the run's thread object (the product writes it when a run starts and ends), when there is one. */
  thread?: { rowsWritten: number; rowsRead: number; alarmsSet: number; databaseSize: number } | null;
}
