import { RunObject } from '../src/run/run-object.ts';
import { measured, type ObjectCounts } from './measure-object.ts';
import type { PeerStats } from './peer-stats.ts';

interface Counted {
  benchCounts(): ObjectCounts;
}

/**
 * The product's `RunObject`, unchanged, with its storage metered, plus
 * `benchStats`: the run's record and counts, and the counts of the run's
 * thread object when the product links one (one thread per run here: the
 * bench sends no `threadId`), since what a run costs includes them.
 */
export class MeasuredRunObject extends measured(RunObject) {
  /** What `benchStats`' own `record()` calls cost, subtracted from the run's counts. */
  #benchRowsRead = 0;
  #benchRowsWritten = 0;

  async benchStats(runId: string): Promise<PeerStats> {
    const meter = this.benchMeter();
    const before = meter.read();
    // `record()` does its SQL synchronously, before its promise resolves: measure around the call, not the await.
    const pending = this.record(runId);
    const after = meter.read();
    const record = await pending;
    this.#benchRowsRead += after.rowsRead - before.rowsRead;
    this.#benchRowsWritten += after.rowsWritten - before.rowsWritten;
    const counts = this.benchCounts();
    counts.rowsRead -= this.#benchRowsRead;
    counts.rowsWritten -= this.#benchRowsWritten;
    let firstTimestamp: number | null = null;
    let payloadBytes: number | null = null;
    let eventRows: number | null = null;
    const terminal = record !== null && record.status !== 'running';
    // The bench polls while the run is live: the reads below (a whole row, a scan of the log) only once it is over.
    if (terminal && record.lastSeq >= 0) {
      const first = meter.unmetered<{ chunks: string }>('SELECT chunks FROM events ORDER BY first_seq LIMIT 1').toArray()[0];
      const line = first?.chunks.split('\n', 1)[0];
      const stamp = line ? (JSON.parse(line) as { timestamp?: unknown }).timestamp : undefined;
      firstTimestamp = typeof stamp === 'number' ? stamp : null;
      const sums = meter.unmetered<{ bytes: number; rows: number }>('SELECT SUM(LENGTH(CAST(chunks AS BLOB))) AS bytes, COUNT(*) AS rows FROM events').one();
      eventRows = sums.rows;
      // Rows join their chunks with '\n': one separator fewer than chunks per row.
      payloadBytes = sums.bytes - (record.lastSeq + 1 - sums.rows);
    }
    const thread = terminal ? await this.#threadCounts() : null;
    return {
      runId,
      status: record?.status ?? 'unknown',
      terminal,
      lastSeq: record?.lastSeq ?? -1,
      firstTimestamp,
      finishedAt: record?.finishedAt ?? null,
      rowsWritten: counts.rowsWritten,
      rowsRead: counts.rowsRead,
      alarmsSet: counts.alarmsSet,
      statements: counts.statements,
      databaseSize: counts.databaseSize,
      payloadBytes,
      eventRows,
      byStatement: counts.byStatement,
      thread,
    };
  }

  /** The linked thread object's counts, if the product links runs to threads and binds THREADS to a metered class. */
  async #threadCounts(): Promise<PeerStats['thread']> {
    const row = this.benchMeter().unmetered<Record<string, SqlStorageValue>>('SELECT * FROM run WHERE singleton = 1').toArray()[0];
    const key = row?.thread_key;
    const threads = (this.env as unknown as { THREADS?: DurableObjectNamespace }).THREADS;
    if (typeof key !== 'string' || !threads) return null;
    const stub = threads.get(threads.idFromName(key)) as unknown as Partial<Counted>;
    try {
      const counts = await (stub as Counted).benchCounts();
      return { rowsWritten: counts.rowsWritten, rowsRead: counts.rowsRead, alarmsSet: counts.alarmsSet, databaseSize: counts.databaseSize };
    } catch {
      return null;
    }
  }
}
