import { DurableObject } from 'cloudflare:workers';
import type { ModelMessage, TerminalRunStatus } from '@tanstack/ai';
import { isTerminalRunStatus } from '@tanstack/ai';
import type { RelayEnv } from '../config.ts';
import { isRelayRunStatus, parseMessages, parseTrustedJson, type RelayRunStatus } from '../protocol/index.ts';
import { hasSchema, migrate } from '../storage/migrations.ts';
import { THREAD_MIGRATIONS } from './schema.ts';
import { stripObservedToolCalls } from './strip.ts';
import { foldRun } from './transcript.ts';

/** How a thread chooses the sandbox its turns run in. */
export interface SandboxPolicy {
  /** `thread`: every turn of a thread in one sandbox (a coding harness finds its files); `none`: one per run. */
  reuse: 'thread' | 'none';
  /** A thread's sandbox older than this is replaced by a fresh one. */
  maxAgeMs: number;
}

export interface BeginTurn {
  threadId: string;
  runId: string;
  /** The run object's name (tenant-qualified), to ask whether the active run is still running. */
  runKey: string;
  userMessages: ModelMessage[];
  sandbox: SandboxPolicy;
  /** `MAX_THREAD_MESSAGES`: a turn that would take the transcript past it is refused, and the thread stays readable. */
  maxMessages: number;
}

export type BeginResult =
  | { kind: 'busy'; activeRunId: string }
  | { kind: 'full'; messages: number }
  /** `history`: the transcript to send before the turn's messages, observed harness tool calls stripped (JSON text). */
  | { kind: 'ok'; history: string; sandboxId: string };

export interface ThreadRunSummary {
  runId: string;
  status: RelayRunStatus;
  startedAt: number;
  finishedAt?: number;
}

export interface ThreadSummary {
  threadId: string;
  activeRunId: string | null;
  /** The active turn's own user messages as JSON text (a joining tab shows its prompt); `null` with no active run. */
  activeUserMessages: string | null;
  runs: ThreadRunSummary[];
}

/**
 * How long a begun turn whose run object does not exist yet counts as being
 * created. The Worker creates the run right after `begin`; a turn still
 * missing after this long was abandoned (the Worker failed in between), and
 * must not hold the thread forever.
 */
const TURN_CREATE_GRACE_MS = 60_000;

/**
 * Payloads cross the RPC boundary as JSON text both ways: each side parses
 * what it receives at its own edge (own properties, null-prototype objects),
 * and the structured clone refuses null-prototype objects anyway.
 */
function parseChunks(text: string): unknown[] {
  const chunks = parseTrustedJson(text, 'chunks');
  return Array.isArray(chunks) ? chunks : [];
}

interface ThreadRow {
  thread_id: string;
  active_run_id: string | null;
  sandbox_generation: number;
  sandbox_started_at: number | null;
  [key: string]: SqlStorageValue;
}

/**
 * One Durable Object per thread: its turns in order, the one active run, and
 * the transcript as TanStack AI `ModelMessage`s. A run tells its thread when
 * it ends (at least once; `settle` is idempotent) and the thread folds the
 * run's chunks into the transcript, harness tool calls included.
 */
export class ThreadObject extends DurableObject<RelayEnv> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: RelayEnv) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
  }

  /**
   * Starts a turn, unless another run of the thread is still running (SPEC:
   * one active run per thread). Asking the active run's object is an await,
   * and other turns may begin meanwhile: the check is made again on what the
   * thread holds after it, and the write follows with no await in between.
   */
  async begin(turn: BeginTurn): Promise<BeginResult> {
    for (;;) {
      const active = this.#thread()?.active_run_id ?? null;
      if (active === null || active === turn.runId) break;
      if (!(await this.#activeHasEnded(active))) return { kind: 'busy', activeRunId: active };
      if (this.#thread()?.active_run_id === active) break;
    }
    const now = Date.now();
    let thread = this.#thread();
    const known = thread ? this.#sql.exec('SELECT 1 FROM runs WHERE run_id = ?', turn.runId).toArray().length > 0 : false;
    const messages = this.#messages();
    if (!known && messages.length + turn.userMessages.length > turn.maxMessages) return { kind: 'full', messages: messages.length };
    const history = JSON.stringify(stripObservedToolCalls(messages));
    this.ctx.storage.transactionSync(() => {
      if (!thread) {
        migrate(this.#sql, THREAD_MIGRATIONS, now);
        this.#sql.exec('INSERT INTO thread (singleton, thread_id, created_at, updated_at) VALUES (1, ?, ?, ?)', turn.threadId, now, now);
      }
      // A retry of the same run (Idempotency-Key) is not a new turn.
      if (!known) {
        this.#sql.exec(
          `INSERT INTO runs (run_id, run_key, status, started_at, user_messages) VALUES (?, ?, 'running', ?, ?)`,
          turn.runId,
          turn.runKey,
          now,
          JSON.stringify(turn.userMessages),
        );
        this.#sql.exec('UPDATE thread SET active_run_id = ?, updated_at = ? WHERE singleton = 1', turn.runId, now);
      }
    });
    thread = this.#thread()!;
    return { kind: 'ok', history, sandboxId: this.#sandboxFor(thread, turn, now) };
  }

  /**
   * The transcript a run of this thread sends its runner before its own turn
   * (observed harness tool calls stripped), for a run that must start over: a
   * run stores only its own messages, so the thread keeps the transcript once.
   */
  async history(): Promise<string> {
    return JSON.stringify(stripObservedToolCalls(this.#messages()));
  }

  /**
   * A run ended: fold its chunks into the transcript and free the thread.
   * Idempotent — a run that retries the notification changes nothing.
   */
  async settle(runId: string, status: TerminalRunStatus, finishedAt: number, chunksJson: string): Promise<void> {
    const thread = this.#thread();
    if (!thread) return;
    const run = this.#sql.exec<{ status: string; user_messages: string }>('SELECT status, user_messages FROM runs WHERE run_id = ?', runId).toArray()[0];
    if (!run || (isRelayRunStatus(run.status) && isTerminalRunStatus(run.status))) return;
    const before = this.#messages();
    const after = foldRun(before, { userMessages: parseMessages(parseTrustedJson(run.user_messages, 'userMessages'), 'userMessages'), chunks: parseChunks(chunksJson) });
    this.ctx.storage.transactionSync(() => {
      for (let i = before.length; i < after.length; i++) {
        this.#sql.exec('INSERT INTO messages (position, message) VALUES (?, ?)', i, JSON.stringify(after[i]));
      }
      this.#sql.exec('UPDATE runs SET status = ?, finished_at = ? WHERE run_id = ?', status, finishedAt, runId);
      this.#sql.exec('UPDATE thread SET active_run_id = NULL, updated_at = ? WHERE singleton = 1 AND active_run_id = ?', finishedAt, runId);
    });
  }

  async summary(): Promise<ThreadSummary | null> {
    const thread = this.#thread();
    if (!thread) return null;
    const runs = this.#sql
      .exec<{ run_id: string; status: string; started_at: number; finished_at: number | null }>('SELECT run_id, status, started_at, finished_at FROM runs ORDER BY position')
      .toArray()
      .map((row) => ({
        runId: row.run_id,
        status: isRelayRunStatus(row.status) ? row.status : 'failed',
        startedAt: row.started_at,
        ...(row.finished_at !== null ? { finishedAt: row.finished_at } : {}),
      }));
    const active = thread.active_run_id === null ? undefined : this.#sql.exec<{ user_messages: string }>('SELECT user_messages FROM runs WHERE run_id = ?', thread.active_run_id).toArray()[0];
    return { threadId: thread.thread_id, activeRunId: thread.active_run_id, activeUserMessages: active?.user_messages ?? null, runs };
  }

  /** The transcript as JSON text, or `null` for an unknown thread. */
  async transcript(): Promise<string | null> {
    return this.#thread() ? JSON.stringify(this.#messages()) : null;
  }

  /**
   * The active run is over if its object says so, or no longer knows it
   * (expired). An object that does not exist yet is a turn still being
   * created (the Worker begins the turn, then creates the run): busy, unless
   * it began so long ago that its creation must have failed.
   */
  async #activeHasEnded(runId: string): Promise<boolean> {
    const row = this.#sql.exec<{ run_key: string; started_at: number }>('SELECT run_key, started_at FROM runs WHERE run_id = ?', runId).toArray()[0];
    if (!row) return true;
    const record = await this.env.RUNS.get(this.env.RUNS.idFromName(row.run_key)).record(runId);
    if (record) return isTerminalRunStatus(record.status);
    return Date.now() - row.started_at > TURN_CREATE_GRACE_MS;
  }

  #sandboxFor(thread: ThreadRow, turn: BeginTurn, now: number): string {
    if (turn.sandbox.reuse === 'none') return turn.runId;
    let generation = thread.sandbox_generation;
    if (thread.sandbox_started_at === null || now - thread.sandbox_started_at > turn.sandbox.maxAgeMs) {
      generation += 1;
      this.#sql.exec('UPDATE thread SET sandbox_generation = ?, sandbox_started_at = ? WHERE singleton = 1', generation, now);
    }
    // Sandbox ids are lowercase and at most 63 characters: derive one from the object's id.
    return `t${this.ctx.id.toString().slice(0, 40)}-${generation}`;
  }

  #thread(): ThreadRow | null {
    if (!hasSchema(this.#sql)) return null;
    return (
      this.#sql
        .exec<ThreadRow>('SELECT thread_id, active_run_id, sandbox_generation, sandbox_started_at FROM thread WHERE singleton = 1')
        .toArray()[0] ?? null
    );
  }

  #messages(): ModelMessage[] {
    if (!hasSchema(this.#sql)) return [];
    const stored = this.#sql
      .exec<{ message: string }>('SELECT message FROM messages ORDER BY position')
      .toArray()
      .map((row) => parseTrustedJson(row.message, 'transcript'));
    // What the relay stored: no per-request bound (MAX_THREAD_MESSAGES is checked when a turn begins).
    return stored.length === 0 ? [] : parseMessages(stored, 'transcript', { source: 'trusted', maxMessages: Number.POSITIVE_INFINITY });
  }
}
