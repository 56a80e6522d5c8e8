import type { RunError, TerminalRunStatus } from '@tanstack/ai';
import { isTerminalRunStatus } from '@tanstack/ai';
import { parseRunError, parseRunnerRunRequest, parseRunUsage, parseRunView, parseStoredTools, parseTrustedJson, type RunUsage, type RunView, type RunnerRunRequest, type ToolSpec } from '../protocol/index.ts';
import { hasSchema, latestVersion, migrate, schemaVersion } from '../storage/migrations.ts';
import { RUN_MIGRATIONS } from './schema.ts';

/** One event as stored: its seq and the chunk's JSON text, never re-serialized. */
export interface StoredEvent {
  seq: number;
  raw: string;
}

export interface RunInit {
  runId: string;
  threadId: string;
  /**
   * The runner request as stored. A thread's run stores only its own turn's
   * messages: the thread keeps the transcript once, and a restart asks it again.
   */
  request: RunnerRunRequest;
  /** Hash of the create request's body, to tell an idempotent retry from a conflicting one. */
  requestHash: string;
  /** The thread object's name (tenant-qualified), told when the run ends. */
  threadKey?: string;
  /** The sandbox (container) the run executes in, when it runs in one. */
  sandboxId?: string;
  /** The run's host tools, webhook URLs included (the runner request carries their descriptors only). */
  tools?: ToolSpec[];
  now: number;
}

/** How a run is tied to its thread. */
export interface ThreadLink {
  threadKey: string | null;
  sandboxId: string | null;
  /** When the thread acknowledged the run's end; null until then. */
  notifiedAt: number | null;
}

export type OpenResult = { created: boolean; record: RunView; requestHash: string };

export class TerminalRunError extends Error {
  constructor(readonly record: RunView) {
    super(`run ${record.runId} is ${record.status}; no further events can be appended`);
    this.name = 'TerminalRunError';
  }
}

/**
 * A row holds many chunks; this bounds one row well under the 2 MB
 * row limit even if every character were 3 bytes of UTF-8.
 */
const MAX_ROW_CHARS = 512 * 1024;

/** Replay reads the log in pages so neither memory nor one SQL cursor grows with the run. */
export const DEFAULT_PAGE_EVENTS = 512;

/** The record's columns, named: the request (the largest one) is read only by `request()`. */
const RECORD_COLUMNS = 'run_id, thread_id, status, started_at, finished_at, updated_at, error, usage';

interface RecordRow {
  run_id: string;
  thread_id: string;
  status: string;
  started_at: number;
  finished_at: number | null;
  updated_at: number;
  error: string | null;
  usage: string | null;
  [key: string]: SqlStorageValue;
}

/**
 * Writes consecutive chunks starting at `firstSeq` as few rows as the row
 * budget allows. Shared by appends and the legacy migration so both respect
 * the same limit.
 */
const encoder = new TextEncoder();

/** UTF-8 length of chunk JSON. Most chunks are ASCII, where it is the string length: only the rest are encoded. */
function utf8Bytes(raws: readonly string[]): number {
  let bytes = 0;
  for (const raw of raws) bytes += /^[\x00-\x7f]*$/.test(raw) ? raw.length : encoder.encode(raw).byteLength;
  return bytes;
}

export function insertEventRows(sql: SqlStorage, firstSeq: number, raws: readonly string[], appendedAt: number): void {
  let start = 0;
  let chars = 0;
  const flush = (end: number) => {
    sql.exec(
      'INSERT INTO events (first_seq, last_seq, chunks, appended_at) VALUES (?, ?, ?, ?)',
      firstSeq + start,
      firstSeq + end - 1,
      raws.slice(start, end).join('\n'),
      appendedAt,
    );
    start = end;
    chars = 0;
  };
  for (let i = 0; i < raws.length; i++) {
    const size = raws[i]!.length + 1;
    if (i > start && chars + size > MAX_ROW_CHARS) flush(i);
    chars += size;
  }
  if (start < raws.length) flush(raws.length);
}

/**
 * The run log: the record and its sequence of chunks, in the run object's
 * SQLite. Storage only — who is told about a change is the lifecycle's
 * business. The contract (TanStack's run-store vocabulary):
 * - `open` is idempotent: an existing record comes back unchanged;
 * - `append` assigns the next seqs and throws on a terminal run;
 * - `finish` is idempotent: the first terminal status wins.
 * All methods are synchronous: SQL here is synchronous, and doing it without
 * an `await` in between makes each call one implicit transaction.
 */
export class RunLog {
  readonly #storage: DurableObjectStorage;
  readonly #sql: SqlStorage;
  /** Cached cursor; `undefined` until first read from storage. */
  #lastSeq: number | undefined;
  /** Epoch ms of the newest events row (0: none); `undefined` until read from storage. */
  #lastAppendAt: number | undefined;
  /** UTF-8 bytes of every chunk stored (RUN_MAX_BYTES); `undefined` until read from storage. */
  #bytes: number | undefined;
  /** Once the schema exists it never disappears except through `reset()`. */
  #hasSchema = false;
  /** Cached: the append path asks on every flush, and the answer changes only here. */
  #terminal: boolean | undefined;
  /**
   * The last row replay split into lines. Rows never change once written, and
   * at full speed one row holds thousands of chunks: re-reading and
   * re-splitting it for every page would dominate a long replay.
   */
  #rowCache: { first: number; lines: string[] } | undefined;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#sql = storage.sql;
  }

  /** Creates the record, or returns the existing one unchanged. */
  open(init: RunInit): OpenResult {
    const existing = this.get();
    if (existing) return { created: false, record: existing, requestHash: this.#requestHash() };
    this.#storage.transactionSync(() => {
      migrate(this.#sql, RUN_MIGRATIONS, init.now);
      this.#sql.exec(
        `INSERT INTO run (singleton, run_id, thread_id, status, started_at, updated_at, request, request_hash, thread_key, sandbox_id, tools)
         VALUES (1, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?)`,
        init.runId,
        init.threadId,
        init.now,
        init.now,
        JSON.stringify(init.request),
        init.requestHash,
        init.threadKey ?? null,
        init.sandboxId ?? null,
        init.tools && init.tools.length > 0 ? JSON.stringify(init.tools) : null,
      );
    });
    this.#lastSeq = -1;
    this.#lastAppendAt = 0;
    this.#bytes = 0;
    this.#terminal = false;
    const record = this.get();
    if (!record) throw new Error('run record missing right after insert');
    return { created: true, record, requestHash: init.requestHash };
  }

  get(): RunView | null {
    if (!this.#ready()) return null;
    const row = this.#sql.exec<RecordRow>(`SELECT ${RECORD_COLUMNS} FROM run WHERE singleton = 1`).toArray()[0];
    return row ? this.#view(row) : null;
  }

  /** The runner request the run was opened with; `null` for an unknown run or one migrated from the legacy layout. */
  request(): RunnerRunRequest | null {
    if (!this.#ready()) return null;
    const row = this.#sql.exec<{ request: string }>('SELECT request FROM run WHERE singleton = 1').toArray()[0];
    if (!row || row.request === 'null') return null;
    return parseRunnerRunRequest(parseTrustedJson(row.request, 'request'));
  }

  /** The run's host tools as `POST /runs` gave them; none for a run without (or a legacy one). */
  tools(): ToolSpec[] {
    if (!this.#ready()) return [];
    const row = this.#sql.exec<{ tools: string | null }>('SELECT tools FROM run WHERE singleton = 1').toArray()[0];
    return row?.tools ? parseStoredTools(parseTrustedJson(row.tools, 'tools')) : [];
  }

  /** Whether no more chunks can be appended: the run is terminal, or there is no run. */
  isTerminal(): boolean {
    if (this.#terminal === undefined) {
      const record = this.get();
      this.#terminal = !record || isTerminalRunStatus(record.status);
    }
    return this.#terminal;
  }

  link(): ThreadLink | null {
    if (!this.#ready()) return null;
    const row = this.#sql
      .exec<{ thread_key: string | null; sandbox_id: string | null; thread_notified_at: number | null }>(
        'SELECT thread_key, sandbox_id, thread_notified_at FROM run WHERE singleton = 1',
      )
      .toArray()[0];
    return row ? { threadKey: row.thread_key, sandboxId: row.sandbox_id, notifiedAt: row.thread_notified_at } : null;
  }

  markThreadNotified(now: number): void {
    if (this.#ready()) this.#sql.exec('UPDATE run SET thread_notified_at = ? WHERE singleton = 1', now);
  }

  /** Every chunk of the run, in seq order, parsed. For the thread's transcript, once the run has ended. */
  *chunks(pageEvents = DEFAULT_PAGE_EVENTS): Generator<unknown> {
    let cursor = -1;
    for (;;) {
      const page = this.page(cursor, pageEvents);
      if (page.length === 0) return;
      for (const event of page) yield parseTrustedJson(event.raw, `event ${event.seq}`);
      cursor = page[page.length - 1]!.seq;
    }
  }

  get lastSeq(): number {
    if (this.#lastSeq === undefined) {
      this.#lastSeq = hasSchema(this.#sql)
        ? (this.#sql.exec<{ last_seq: number }>('SELECT last_seq FROM events ORDER BY first_seq DESC LIMIT 1').toArray()[0]?.last_seq ?? -1)
        : -1;
    }
    return this.#lastSeq;
  }

  /**
   * Appends chunks (their JSON text) as the next seqs. Consecutive chunks share
   * a row, so a flush of N chunks costs about one row written, not N.
   */
  append(raws: readonly string[], now: number): { firstSeq: number; lastSeq: number } {
    if (this.isTerminal()) {
      const record = this.get();
      if (!record) throw new Error('append to a run that was never opened');
      throw new TerminalRunError(record);
    }
    const firstSeq = this.lastSeq + 1;
    if (raws.length === 0) return { firstSeq, lastSeq: firstSeq - 1 };
    const bytes = this.storedBytes;
    this.#storage.transactionSync(() => insertEventRows(this.#sql, firstSeq, raws, now));
    this.#lastSeq = firstSeq + raws.length - 1;
    this.#lastAppendAt = now;
    this.#bytes = bytes + utf8Bytes(raws);
    return { firstSeq, lastSeq: this.#lastSeq };
  }

  /** UTF-8 bytes of the chunk JSON stored so far (the separators between a row's chunks not counted). */
  get storedBytes(): number {
    if (this.#bytes === undefined) {
      this.#bytes = hasSchema(this.#sql)
        ? this.#sql.exec<{ bytes: number }>("SELECT COALESCE(SUM(length(CAST(chunks AS BLOB)) - (last_seq - first_seq)), 0) AS bytes FROM events").one().bytes
        : 0;
    }
    return this.#bytes;
  }

  /** Epoch ms of the last append (0: none yet): when the harness last wrote a chunk, as far as storage knows. */
  get lastAppendAt(): number {
    if (this.#lastAppendAt === undefined && !hasSchema(this.#sql)) return 0;
    return this.#lastAppendAt ?? this.#lastAppendedAt();
  }

  /** Moves a running run to a terminal status, with what it used if it said. A run already terminal is returned unchanged (`changed: false`). */
  finish(status: TerminalRunStatus, error: RunError | undefined, now: number, usage?: RunUsage): { record: RunView; changed: boolean } | null {
    const current = this.get();
    if (!current) return null;
    if (isTerminalRunStatus(current.status)) return { record: current, changed: false };
    this.#sql.exec(
      'UPDATE run SET status = ?, finished_at = ?, updated_at = ?, error = ?, usage = ? WHERE singleton = 1',
      status,
      now,
      now,
      error ? JSON.stringify(error) : null,
      usage ? JSON.stringify(usage) : null,
    );
    this.#terminal = true;
    return { record: this.get()!, changed: true };
  }

  /** Up to `maxEvents` events after `afterSeq`, in seq order (a missing seq is skipped). The cursor is consumed before returning. */
  page(afterSeq: number, maxEvents = DEFAULT_PAGE_EVENTS): StoredEvent[] {
    if (afterSeq >= this.lastSeq) return [];
    const events: StoredEvent[] = [];
    let next = afterSeq + 1;
    const cached = this.#rowCache;
    if (cached && next >= cached.first && next < cached.first + cached.lines.length) {
      next = this.#take(cached.first, cached.lines, next, maxEvents, events);
      if (events.length >= maxEvents) return events;
    }
    // The row holding `next` starts at or before it; later rows follow in key order.
    const rows = this.#sql.exec<{ first_seq: number; chunks: string }>(
      `SELECT first_seq, chunks FROM events
       WHERE first_seq >= COALESCE((SELECT MAX(first_seq) FROM events WHERE first_seq <= ?), 0)
       ORDER BY first_seq LIMIT ?`,
      next,
      maxEvents,
    );
    for (const row of rows) {
      const lines = row.chunks.split('\n');
      this.#rowCache = { first: row.first_seq, lines };
      next = this.#take(row.first_seq, lines, next, maxEvents, events);
      if (events.length >= maxEvents) break;
    }
    return events;
  }

  /** Moves the events of one row from `next` on into `events`, up to `maxEvents`; returns the next seq wanted. */
  #take(first: number, lines: string[], next: number, maxEvents: number, events: StoredEvent[]): number {
    for (let seq = Math.max(next, first); seq < first + lines.length && events.length < maxEvents; seq++) {
      events.push({ seq, raw: lines[seq - first]! });
      next = seq + 1;
    }
    return next;
  }

  /** Forgets every cached value, e.g. after the storage was wiped or rewritten by a migration. */
  reset(): void {
    this.#lastSeq = undefined;
    this.#lastAppendAt = undefined;
    this.#bytes = undefined;
    this.#hasSchema = false;
    this.#terminal = undefined;
    this.#rowCache = undefined;
  }

  #requestHash(): string {
    return this.#sql.exec<{ request_hash: string }>('SELECT request_hash FROM run WHERE singleton = 1').one().request_hash;
  }

  /** Whether the schema exists, bringing one written by an older deploy up to date on first touch. */
  #ready(): boolean {
    if (this.#hasSchema) return true;
    if (!hasSchema(this.#sql)) return false;
    if (schemaVersion(this.#sql) < latestVersion(RUN_MIGRATIONS)) {
      this.#storage.transactionSync(() => migrate(this.#sql, RUN_MIGRATIONS, Date.now()));
    }
    this.#hasSchema = true;
    return true;
  }

  #view(row: RecordRow): RunView {
    return parseRunView({
      runId: row.run_id,
      threadId: row.thread_id,
      status: row.status,
      lastSeq: this.lastSeq,
      startedAt: row.started_at,
      updatedAt: Math.max(row.updated_at, this.#lastAppendAt ?? this.#lastAppendedAt()),
      ...(row.finished_at !== null ? { finishedAt: row.finished_at } : {}),
      ...(row.error !== null ? { error: parseRunError(parseTrustedJson(row.error, 'record.error')) } : {}),
      ...(row.usage !== null ? { usage: parseRunUsage(parseTrustedJson(row.usage, 'record.usage')) } : {}),
    });
  }

  #lastAppendedAt(): number {
    const at = this.#sql.exec<{ appended_at: number }>('SELECT appended_at FROM events ORDER BY first_seq DESC LIMIT 1').toArray()[0]?.appended_at ?? 0;
    this.#lastAppendAt = at;
    return at;
  }
}
