/**
 * Counts what a Durable Object's storage is billed for, without touching the
 * object's code: `sql.exec` and `setAlarm` are wrapped on the object's own
 * storage instance before the object's constructor sees it.
 *
 * `rowsWritten` / `rowsRead` live on the SQL cursor and grow while it is
 * consumed, so the last cursor is harvested again at the next statement and
 * whenever the meter is read (the product consumes each cursor before any
 * `await`, so by then it is complete). `setAlarm` is billed as one row written.
 */
export interface StorageCounts {
  rowsWritten: number;
  rowsRead: number;
  statements: number;
  alarmsSet: number;
}

/** Per statement text (whitespace collapsed, cut to 80 characters): where the rows go. */
export type StatementCounts = Record<string, { calls: number; rowsWritten: number; rowsRead: number }>;

export interface StorageMeter {
  /** The counts so far (harvests the open cursor first). */
  read(): StorageCounts;
  byStatement(): StatementCounts;
  /** Runs a statement the meter does not count (the bench's own reads). */
  unmetered<T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]): SqlStorageCursor<T>;
}

const MINIFLARE_TABLE = '__miniflare_do_name';

interface OpenCursor {
  cursor: SqlStorageCursor<Record<string, SqlStorageValue>>;
  written: number;
  read: number;
  entry: { calls: number; rowsWritten: number; rowsRead: number };
}

export function meterStorage(storage: DurableObjectStorage): StorageMeter {
  const counts: StorageCounts = { rowsWritten: 0, rowsRead: 0, statements: 0, alarmsSet: 0 };
  const sql = storage.sql;
  const exec = sql.exec.bind(sql) as (query: string, ...bindings: unknown[]) => SqlStorageCursor<Record<string, SqlStorageValue>>;
  // Keyed by the statement text as the product passes it (a constant, so the lookup is cheap); `null`: not counted.
  const statements = new Map<string, { calls: number; rowsWritten: number; rowsRead: number } | null>();
  let open: OpenCursor | undefined;
  const harvest = () => {
    if (!open) return;
    const { rowsWritten, rowsRead } = open.cursor;
    open.entry.rowsWritten += rowsWritten - open.written;
    open.entry.rowsRead += rowsRead - open.read;
    counts.rowsWritten += rowsWritten - open.written;
    counts.rowsRead += rowsRead - open.read;
    open.written = rowsWritten;
    open.read = rowsRead;
  };
  const metered = (query: string, ...bindings: unknown[]) => {
    let entry = statements.get(query);
    if (entry === undefined) {
      // Miniflare records each object's name in its own table: local-dev bookkeeping, not the product's.
      entry = query.includes(MINIFLARE_TABLE) ? null : { calls: 0, rowsWritten: 0, rowsRead: 0 };
      statements.set(query, entry);
    }
    if (entry === null) return exec(query, ...bindings);
    harvest();
    const cursor = exec(query, ...bindings);
    counts.statements++;
    entry.calls++;
    open = { cursor, written: 0, read: 0, entry };
    // A write runs when `exec` is called; count it now rather than at the next statement.
    harvest();
    return cursor;
  };
  const setAlarm = storage.setAlarm.bind(storage);
  Object.defineProperty(sql, 'exec', { value: metered, configurable: true, writable: true });
  Object.defineProperty(storage, 'setAlarm', {
    value: (scheduledTime: number | Date, options?: DurableObjectSetAlarmOptions) => {
      counts.alarmsSet++;
      return setAlarm(scheduledTime, options);
    },
    configurable: true,
    writable: true,
  });
  if (storage.sql !== sql || storage.sql.exec !== metered) {
    throw new Error('the bench cannot meter this runtime: ctx.storage.sql is not one stable instance');
  }
  return {
    read() {
      harvest();
      return { ...counts };
    },
    byStatement() {
      harvest();
      const out: StatementCounts = {};
      for (const [query, entry] of statements) {
        if (!entry) continue;
        const key = query.replace(/\s+/g, ' ').trim().slice(0, 80);
        const sum = (out[key] ??= { calls: 0, rowsWritten: 0, rowsRead: 0 });
        sum.calls += entry.calls;
        sum.rowsWritten += entry.rowsWritten;
        sum.rowsRead += entry.rowsRead;
      }
      return out;
    },
    unmetered: <T extends Record<string, SqlStorageValue>>(query: string, ...bindings: unknown[]) =>
      exec(query, ...bindings) as unknown as SqlStorageCursor<T>,
  };
}
