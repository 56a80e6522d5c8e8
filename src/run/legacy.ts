import { isTerminalRunStatus } from '@tanstack/ai';
import { isObject, parseRunError, ProtocolError, type RelayRunStatus } from '../protocol/index.ts';
import { migrate } from '../storage/migrations.ts';
import { RUN_MIGRATIONS } from './schema.ts';
import { insertEventRows } from './run-log.ts';

/**
 * Runs written by earlier deployments of the TanStack Cloudflare run log live
 * in the object's key-value storage:
 *   rec:<runId>                  → the record
 *   evt:<runId>:<8-digit seq>    → one chunk
 * On first read they are rewritten into the SQLite layout and the legacy keys
 * are removed in the same transaction, so a later read finds the new layout
 * and writes nothing.
 */

export const legacyRecordKey = (runId: string) => `rec:${runId}`;
export const legacyEventPrefix = (runId: string) => `evt:${runId}:`;

const LEGACY_STATUS: Record<string, RelayRunStatus> = {
  running: 'running',
  done: 'completed',
  error: 'failed',
  aborted: 'aborted',
  // A converged record already speaks the current vocabulary.
  completed: 'completed',
  failed: 'failed',
};

/** The legacy record mapped to the current vocabulary (SPEC: "Legacy records"). */
export interface ConvertedRecord {
  runId: string;
  threadId: string;
  status: RelayRunStatus;
  startedAt: number;
  finishedAt?: number;
  updatedAt: number;
  error?: { message: string; code?: string };
}

function int(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) throw new ProtocolError(field, 'expected a non-negative integer');
  return value;
}

/** Pure mapping, exported for the golden fixtures. */
export function convertLegacyRecord(runId: string, value: unknown): ConvertedRecord {
  if (!isObject(value)) throw new ProtocolError('legacy record', 'expected an object');
  const status = typeof value.status === 'string' && Object.hasOwn(LEGACY_STATUS, value.status) ? LEGACY_STATUS[value.status]! : null;
  if (!status) throw new ProtocolError('legacy record.status', `unknown status ${JSON.stringify(value.status)}`);
  const converged = value.startedAt !== undefined;
  const startedAt = int(converged ? value.startedAt : value.createdAt, converged ? 'legacy record.startedAt' : 'legacy record.createdAt');
  const updatedAt = value.updatedAt === undefined ? startedAt : int(value.updatedAt, 'legacy record.updatedAt');
  const record: ConvertedRecord = {
    runId,
    threadId: typeof value.threadId === 'string' && value.threadId !== '' ? value.threadId : runId,
    status,
    startedAt,
    updatedAt,
  };
  if (isTerminalRunStatus(status)) record.finishedAt = value.finishedAt === undefined ? updatedAt : int(value.finishedAt, 'legacy record.finishedAt');
  if (value.error !== undefined && value.error !== null) {
    record.error = typeof value.error === 'string' ? { message: value.error } : parseRunError(value.error, 'legacy record.error');
  }
  return record;
}

/** A legacy chunk may have been stored as an object (structured clone) or as its JSON text. */
function chunkText(value: unknown): string {
  const chunk = typeof value === 'string' ? JSON.parse(value) : value;
  if (!isObject(chunk) || typeof chunk.type !== 'string') throw new ProtocolError('legacy event', 'expected a chunk object with a type');
  return JSON.stringify(chunk);
}

/**
 * Migrates `runId` if its legacy record exists. Returns whether it did.
 * Reads only when there is nothing to migrate.
 */
export function migrateLegacyRun(storage: DurableObjectStorage, runId: string, now: number): boolean {
  const kv = storage.kv;
  const legacy = kv.get(legacyRecordKey(runId));
  if (legacy === undefined) return false;
  const record = convertLegacyRecord(runId, legacy);
  const events: Array<{ seq: number; raw: string; key: string }> = [];
  for (const [key, value] of kv.list({ prefix: legacyEventPrefix(runId) })) {
    const seq = Number(key.slice(legacyEventPrefix(runId).length));
    if (!Number.isSafeInteger(seq) || seq < 0) throw new ProtocolError(key, 'expected an 8-digit seq');
    events.push({ seq, raw: chunkText(value), key });
  }
  // Zero-padded keys list in seq order; sort anyway so a wider seq cannot reorder.
  events.sort((a, b) => a.seq - b.seq);
  const sql = storage.sql;
  storage.transactionSync(() => {
    migrate(sql, RUN_MIGRATIONS, now);
    sql.exec(
      `INSERT INTO run (singleton, run_id, thread_id, status, started_at, finished_at, updated_at, error, request, request_hash)
       VALUES (1, ?, ?, ?, ?, ?, ?, ?, 'null', '')`,
      record.runId,
      record.threadId,
      record.status,
      record.startedAt,
      record.finishedAt ?? null,
      record.updatedAt,
      record.error ? JSON.stringify(record.error) : null,
    );
    // Consecutive seqs share rows, under the same row budget as appends.
    let i = 0;
    while (i < events.length) {
      let j = i + 1;
      while (j < events.length && events[j]!.seq === events[j - 1]!.seq + 1) j++;
      insertEventRows(
        sql,
        events[i]!.seq,
        events.slice(i, j).map((e) => e.raw),
        record.updatedAt,
      );
      i = j;
    }
    for (const event of events) kv.delete(event.key);
    kv.delete(legacyRecordKey(runId));
  });
  return true;
}
