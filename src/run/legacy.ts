import { isTerminalRunStatus } from '@tanstack/ai';
import { isObject, ownRecord, parseTrustedJson, ProtocolError, sanitizeTrusted, type RelayRunStatus } from '../protocol/index.ts';
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
 * and writes nothing. Everything is parsed before anything is written: a
 * record that cannot be read is moved aside with its reason, once, instead of
 * failing every read after it.
 */

export const legacyRecordKey = (runId: string) => `rec:${runId}`;
export const legacyEventPrefix = (runId: string) => `evt:${runId}:`;
/** Where an unreadable run's keys are moved, kept for its owner to inspect; never served. */
export const ASIDE_PREFIX = 'aside:';
const asideReasonKey = (runId: string) => `${ASIDE_PREFIX}reason:${runId}`;

const LEGACY_STATUS: Record<string, RelayRunStatus> = {
  running: 'running',
  done: 'completed',
  error: 'failed',
  aborted: 'aborted',
  // A converged record already speaks core's vocabulary. Core's `interrupted`
  // is a pause that interrupt-resume continues, deliberately not terminal and
  // never `aborted`: it stays a live run (the relay then reattaches, and a
  // runner that does not know it ends it with `runner_lost`).
  completed: 'completed',
  failed: 'failed',
  interrupted: 'running',
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

/** Core's `RunError`, as leniently as the seed wrote it: a bare string, or a code of another type (kept as its text). */
function legacyError(value: unknown): { message: string; code?: string } {
  if (typeof value === 'string') return { message: value };
  const error = ownRecord(value, 'legacy record.error');
  if (typeof error.message !== 'string') throw new ProtocolError('legacy record.error.message', 'expected a string');
  const code = error.code;
  if (code === undefined || code === null) return { message: error.message };
  if (typeof code === 'string') return { message: error.message, code };
  if (typeof code === 'number' || typeof code === 'boolean') return { message: error.message, code: String(code) };
  throw new ProtocolError('legacy record.error.code', 'expected a string or a number');
}

/** Pure mapping, exported for the golden fixtures. */
export function convertLegacyRecord(runId: string, value: unknown): ConvertedRecord {
  const fields = ownRecord(value, 'legacy record');
  const status = typeof fields.status === 'string' && Object.hasOwn(LEGACY_STATUS, fields.status) ? LEGACY_STATUS[fields.status]! : null;
  if (!status) throw new ProtocolError('legacy record.status', `unknown status ${JSON.stringify(fields.status)}`);
  const converged = fields.startedAt !== undefined;
  const startedAt = int(converged ? fields.startedAt : fields.createdAt, converged ? 'legacy record.startedAt' : 'legacy record.createdAt');
  const updatedAt = fields.updatedAt === undefined ? startedAt : int(fields.updatedAt, 'legacy record.updatedAt');
  const record: ConvertedRecord = {
    runId,
    threadId: typeof fields.threadId === 'string' && fields.threadId !== '' ? fields.threadId : runId,
    status,
    startedAt,
    updatedAt,
  };
  // Only a terminal run has finished; an `interrupted` one has not, whatever it carries.
  if (isTerminalRunStatus(status)) record.finishedAt = fields.finishedAt === undefined ? updatedAt : int(fields.finishedAt, 'legacy record.finishedAt');
  if (fields.error !== undefined && fields.error !== null) record.error = legacyError(fields.error);
  return record;
}

/** A legacy chunk may have been stored as an object (structured clone) or as its JSON text. */
function chunkText(value: unknown, key: string): string {
  let chunk: unknown;
  try {
    chunk = typeof value === 'string' ? parseTrustedJson(value, key) : sanitizeTrusted(value, key);
  } catch {
    throw new ProtocolError(key, 'expected a chunk as JSON text or an object');
  }
  if (!isObject(chunk) || typeof chunk.type !== 'string') throw new ProtocolError(key, 'expected a chunk object with a type');
  return JSON.stringify(chunk);
}

export type LegacyOutcome =
  /** No legacy record under this id. */
  | { kind: 'none' }
  | { kind: 'migrated'; record: ConvertedRecord }
  /** It ended longer than the retention ago: deleted, as retention would have. */
  | { kind: 'expired' }
  /** It could not be read: its keys were moved aside (now or earlier), for this reason. */
  | { kind: 'unreadable'; reason: string };

/**
 * Migrates `runId` if its legacy record exists. Reads only when there is
 * nothing to migrate; `runTtlMs` applies SPEC's retention to it at once.
 */
export function migrateLegacyRun(storage: DurableObjectStorage, runId: string, now: number, runTtlMs: number): LegacyOutcome {
  const kv = storage.kv;
  const legacy = kv.get(legacyRecordKey(runId));
  if (legacy === undefined) {
    const aside = kv.get(asideReasonKey(runId));
    return aside === undefined ? { kind: 'none' } : { kind: 'unreadable', reason: typeof aside === 'string' ? aside : 'unreadable legacy record' };
  }
  const keys = [...kv.list({ prefix: legacyEventPrefix(runId) })];
  let record: ConvertedRecord;
  const events: Array<{ seq: number; raw: string }> = [];
  try {
    record = convertLegacyRecord(runId, legacy);
    for (const [key, value] of keys) {
      const seq = Number(key.slice(legacyEventPrefix(runId).length));
      if (!Number.isSafeInteger(seq) || seq < 0) throw new ProtocolError(key, 'expected an 8-digit seq');
      events.push({ seq, raw: chunkText(value, key) });
    }
    // Zero-padded keys list in seq order; sort anyway so a wider seq cannot reorder.
    events.sort((a, b) => a.seq - b.seq);
    const twice = events.find((event, i) => i > 0 && events[i - 1]!.seq === event.seq);
    if (twice) throw new ProtocolError(`${legacyEventPrefix(runId)}${twice.seq}`, 'the same seq is stored twice');
  } catch (error) {
    const reason = `The run's legacy record could not be read (${error instanceof Error ? error.message : String(error)}); it was set aside and cannot be served.`;
    storage.transactionSync(() => {
      kv.put(asideReasonKey(runId), reason);
      kv.put(`${ASIDE_PREFIX}${legacyRecordKey(runId)}`, legacy);
      kv.delete(legacyRecordKey(runId));
      for (const [key, value] of keys) {
        kv.put(`${ASIDE_PREFIX}${key}`, value);
        kv.delete(key);
      }
    });
    return { kind: 'unreadable', reason };
  }
  if (record.finishedAt !== undefined && now >= record.finishedAt + runTtlMs) {
    storage.transactionSync(() => {
      for (const [key] of keys) kv.delete(key);
      kv.delete(legacyRecordKey(runId));
    });
    return { kind: 'expired' };
  }
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
    // Consecutive seqs share rows, under the same row budget as appends; a hole starts a new row.
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
    for (const [key] of keys) kv.delete(key);
    kv.delete(legacyRecordKey(runId));
  });
  return { kind: 'migrated', record };
}
