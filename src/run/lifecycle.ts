import type { RunError, StreamChunk, TerminalRunStatus } from '@tanstack/ai';
import { isTerminalRunStatus } from '@tanstack/ai';
import type { RelayConfig, RelayEnv } from '../config.ts';
import {
  CLOSE_CODES,
  isObject,
  toRpcValue,
  parseMessages,
  parseTrustedJson,
  runErrorOf,
  terminalChunkType,
  usageOfRunFinished,
  type RelayRunErrorCode,
  type RunUsage,
  type RunView,
  type RunnerRunRequest,
  type ToolAnswerRefusal,
  type ToolResult,
} from '../protocol/index.ts';
import type { RunnerTransport } from '../runner/transport.ts';
import { tenantStub } from '../tenant/tenant-object.ts';
import { compactForTranscript } from '../thread/compact.ts';
import { Driver, failureBatch, type Batch, type ReadEnd } from './driver.ts';
import { migrateLegacyRun } from './legacy.ts';
import { RunLog, TerminalRunError, type RunInit, type StoredEvent } from './run-log.ts';
import { HostToolExecutor } from './host-tools.ts';
import { Tails } from './tails.ts';
import { decide, REATTACH_RETRY_MS } from './watchdog.ts';

/**
 * Where a batch left the run: still `open`, now `terminal` (the batch ended
 * it), or `rejected` (it was already terminal, e.g. cancelled, and nothing was
 * appended).
 */
export type AcceptResult = 'open' | 'terminal' | 'rejected';

/** A run as a request finds it: served, unknown, or a legacy record set aside (and why). */
export type RunLookup = { kind: 'found'; record: RunView } | { kind: 'missing' } | { kind: 'unreadable'; reason: string };

export interface StartCall extends Omit<RunInit, 'now'> {
  /**
   * The thread's transcript before this turn, for the runner only: the run
   * stores its own messages, and asks its thread again if it must start over.
   */
  history?: RunnerRunRequest['messages'];
}

/**
 * A run's lifecycle, in one place and in one direction: the driver's batches
 * (or a test's, through `ingest`) come in; this appends them to the log, fans
 * them out, applies SPEC's rules (`RUN_FINISHED` completes, `RUN_ERROR`
 * fails), tells the thread, kills the harness of a run that failed, and keeps
 * the one alarm on the next deadline. Nothing it calls calls back into it.
 */
export class RunLifecycle {
  readonly #ctx: DurableObjectState;
  readonly #env: RelayEnv;
  readonly #config: RelayConfig;
  readonly #log: RunLog;
  readonly #tails: Tails;
  readonly #transport: RunnerTransport;
  readonly #driver: Driver;
  readonly #tools: HostToolExecutor;
  /** The pump reading the runner in this instance, if any. */
  #pump: AbortController | undefined;
  /** A reattach found the runner restarting: the alarm tries again then. */
  #retryAt: number | null = null;

  constructor(ctx: DurableObjectState, env: RelayEnv, config: RelayConfig, log: RunLog, transport: RunnerTransport) {
    this.#ctx = ctx;
    this.#env = env;
    this.#config = config;
    this.#log = log;
    this.#tails = new Tails(ctx, log);
    this.#transport = transport;
    this.#driver = new Driver(transport);
    this.#tools = new HostToolExecutor({ sql: ctx.storage.sql, log, transport, config, waitUntil: (work) => ctx.waitUntil(work) });
  }


  get tails(): Tails {
    return this.#tails;
  }

  /**
   * The record, migrating a legacy key-value run on its first read (SPEC).
   * Starts nothing: a request that should restart a pump calls `ensureDriving`.
   */
  lookup(runId: string): RunLookup {
    const record = this.#log.get();
    if (record) return { kind: 'found', record: this.#withPendingCalls(record) };
    if (runId === '') return { kind: 'missing' };
    const legacy = migrateLegacyRun(this.#ctx.storage, runId, Date.now(), this.#config.runTtlMs);
    if (legacy.kind === 'unreadable') return legacy;
    if (legacy.kind !== 'migrated') return { kind: 'missing' };
    this.#log.reset();
    const migrated = this.#log.get();
    if (!migrated) return { kind: 'missing' };
    // A migrated run is held to the same retention as any other.
    this.#ctx.waitUntil(this.#schedule());
    return { kind: 'found', record: migrated };
  }

  /**
   * A client tool call's answer (SPEC "Interactive runs"). Stored before this
   * returns, so it is durable before it is forwarded; the runner then gets it
   * from `dispatch`, now or after a restart.
   */
  answer(result: ToolResult): { kind: 'answered'; record: RunView } | { kind: ToolAnswerRefusal } | { kind: 'missing' } {
    const record = this.#log.get();
    if (!record) return { kind: 'missing' };
    if (isTerminalRunStatus(record.status)) return { kind: 'run_finished' };
    const answered = this.#tools.answer(result.toolCallId, result.outcome);
    if (answered.kind === 'unknown') return { kind: 'unknown_call' };
    if (answered.kind === 'already_answered') return { kind: 'already_answered' };
    this.#tools.dispatch();
    this.#ctx.waitUntil(this.#schedule());
    return { kind: 'answered', record: this.#withPendingCalls(this.#log.get() ?? record) };
  }

  /** The record as the API serves it: a live run lists the client tool calls waiting for an answer. */
  #withPendingCalls(record: RunView): RunView {
    if (isTerminalRunStatus(record.status)) return record;
    const waiting = this.#tools.store.waitingClientCalls();
    if (waiting.length === 0) return record;
    // A plain copy of each input: stored JSON is parsed into null-prototype objects, which RPC refuses.
    return { ...record, pendingToolCalls: waiting.map(({ toolCallId, name, input, requestedAt }) => ({ toolCallId, name, input: isObject(input) ? toRpcValue(input) : {}, requestedAt })) };
  }

  /** Opens the run, or finds the one this id already names (an idempotent retry). */
  async create(call: StartCall): Promise<{ created: boolean; record: RunView; requestHash: string }> {
    const { history, ...init } = call;
    const opened = this.#log.open({ ...init, now: Date.now() });
    if (!opened.created) {
      this.ensureDriving();
      return opened;
    }
    await this.#schedule();
    const request = history && history.length > 0 ? { ...init.request, messages: [...history, ...init.request.messages] } : init.request;
    this.#ctx.waitUntil(this.#drive('start', request));
    return opened;
  }

  /** A live run with no pump in this instance (the object restarted): reattach from the durable cursor. */
  ensureDriving(): void {
    const record = this.#log.get();
    if (!record || isTerminalRunStatus(record.status)) return;
    // Tool calls a restart interrupted go on from storage, whether or not a pump runs here.
    this.#tools.dispatch();
    if (this.#pump) return;
    this.#ctx.waitUntil(this.#drive('reattach'));
    this.#ctx.waitUntil(this.#schedule());
  }

  /** The producer interface the tests use: chunks as the runner pump would hand them on. */
  ingest(chunks: StreamChunk[]): AcceptResult {
    const end = chunks.findIndex((chunk) => terminalChunkType(chunk) !== null);
    const kept = end === -1 ? chunks : chunks.slice(0, end + 1);
    return this.#apply({ chunks: kept.map((chunk) => ({ raw: JSON.stringify(chunk), chunk })), terminal: end !== -1 });
  }

  /** Moves a running run to `aborted` (durably, first), then stops its harness. Idempotent. */
  async cancel(): Promise<RunView | null> {
    const record = this.#log.get();
    if (!record) return record;
    if (isTerminalRunStatus(record.status)) {
      // The record stays as it is, but a harness that outlived its run's end (SPEC) is stopped now.
      this.#ctx.waitUntil(this.#killHarness(record.runId));
      return record;
    }
    this.#stopPump();
    return this.#finish([], 'aborted');
  }

  async alarm(): Promise<void> {
    const record = this.#log.get();
    if (!record) return;
    const { action } = this.#decide(record);
    if (action === 'expire') {
      this.#tails.closeAll(CLOSE_CODES.goingAway, 'run expired');
      await this.#ctx.storage.deleteAlarm();
      await this.#ctx.storage.deleteAll();
      this.#log.reset();
      return;
    }
    if (!isTerminalRunStatus(record.status)) this.#tools.expire(Date.now());
    // Either way the run's tool calls move on: ensureDriving dispatches them too.
    if (action === 'reattach') this.ensureDriving();
    else if (!isTerminalRunStatus(record.status)) this.#tools.dispatch();
    if (action === 'notify') await this.#notifyThread();
    const seconds = Math.round(this.#config.stallTimeoutMs / 1000);
    if (action === 'give-up') {
      this.#fail('runner_unavailable', `The harness runner could not be reattached for ${seconds} s (it did not come back after a restart), so the run was stopped.`);
    }
    if (action === 'stall') {
      this.#stopPump();
      this.#fail('stalled', `The runner sent nothing, not even a keep-alive, for ${seconds} s (STALL_TIMEOUT_SECONDS), so the run was stopped.`);
    }
    const { runMaxMs, idleTimeoutMs } = this.#config.limits;
    if (action === 'max-duration') {
      this.#stopPump();
      this.#fail('max_duration_exceeded', `The run went on for ${runMaxMs / 1000} s (RUN_MAX_SECONDS), so it was stopped and its harness killed.`);
    }
    if (action === 'idle') {
      this.#stopPump();
      this.#fail('idle_timeout', `The harness wrote no chunk for ${idleTimeoutMs / 1000} s (IDLE_TIMEOUT_SECONDS; keep-alives do not count), so the run was stopped and its harness killed.`);
    }
    await this.#schedule();
  }

  /**
   * The one write path for chunks: append, fan out, and end the run on a
   * terminal batch. The run's limits (duration, idle time, events, bytes)
   * belong here too, checked against each batch before it is appended.
   */
  #apply(incoming: Batch): AcceptResult {
    if (incoming.chunks.length === 0) return this.#log.isTerminal() ? 'rejected' : 'open';
    const batch = this.#bounded(incoming);
    const raws = batch.chunks.map((c) => c.raw);
    let events: StoredEvent[];
    const now = Date.now();
    try {
      const { firstSeq } = this.#log.append(raws, now);
      events = raws.map((raw, i) => ({ seq: firstSeq + i, raw }));
      // In the same turn as the append: a host tool call's request and its row commit together.
      if (this.#tools.record(batch.chunks.map(({ chunk }, i) => ({ seq: firstSeq + i, chunk })), now)) {
        this.#tools.dispatch();
        // A client call's timeout is a deadline of its own: the alarm must come for it.
        this.#ctx.waitUntil(this.#schedule());
      }
    } catch (error) {
      if (error instanceof TerminalRunError) return 'rejected';
      throw error;
    }
    if (!batch.terminal) {
      this.#tails.flush(events, null);
      return 'open';
    }
    const last = batch.chunks[batch.chunks.length - 1]!.chunk;
    if (last.type === 'RUN_FINISHED') this.#finish(events, 'completed', undefined, usageOfRunFinished(last));
    else this.#finish(events, 'failed', runErrorOf(last));
    return 'terminal';
  }

  /**
   * RUN_MAX_EVENTS and RUN_MAX_BYTES: a batch that would take the run past
   * either keeps the chunks that fit and ends with a `RUN_ERROR` saying which
   * (the run fails and its harness is killed). The events limit counts that
   * `RUN_ERROR` too; the bytes limit is passed by at most its own size.
   */
  #bounded(batch: Batch): Batch {
    const { maxEvents, maxBytes } = this.#config.limits;
    const stored = this.#log.lastSeq + 1;
    const room = maxEvents - stored - (batch.terminal ? 0 : 1);
    let chars = 0;
    for (const { raw } of batch.chunks) chars += raw.length;
    // The common case in O(1) per chunk: a UTF-16 unit is at most 3 bytes of UTF-8.
    if (batch.chunks.length <= room && this.#log.storedBytes + 3 * chars <= maxBytes) return batch;
    const encoder = new TextEncoder();
    let bytes = this.#log.storedBytes;
    for (let i = 0; i < batch.chunks.length; i++) {
      const last = i === batch.chunks.length - 1;
      const overEvents = stored + i + 1 > maxEvents - (batch.terminal && last ? 0 : 1);
      bytes += encoder.encode(batch.chunks[i]!.raw).byteLength;
      if (!overEvents && bytes <= maxBytes) continue;
      const record = this.#log.get()!;
      const [code, message]: [RelayRunErrorCode, string] = overEvents
        ? ['max_events_exceeded', `The run reached RUN_MAX_EVENTS (${maxEvents} events), so it was stopped and its harness killed.`]
        : ['max_bytes_exceeded', `The run's chunks reached RUN_MAX_BYTES (${maxBytes} bytes of JSON), so it was stopped and its harness killed.`];
      return { chunks: [...batch.chunks.slice(0, i), ...failureBatch(record.runId, record.threadId, code, message).chunks], terminal: true };
    }
    return batch;
  }

  /** Appends a synthesized `RUN_ERROR` and fails the run, unless it is already terminal. */
  #fail(code: RelayRunErrorCode, message: string): void {
    const record = this.#log.get();
    if (!record || isTerminalRunStatus(record.status)) return;
    this.#apply(failureBatch(record.runId, record.threadId, code, message));
  }

  /** The first terminal status wins; its tails, thread and harness hear of it once. */
  #finish(events: readonly StoredEvent[], status: TerminalRunStatus, error?: RunError, usage?: RunUsage): RunView | null {
    const result = this.#log.finish(status, error, Date.now(), usage);
    if (!result) return null;
    this.#tails.flush(events, result.changed ? result.record : null);
    if (result.changed) {
      this.#ctx.waitUntil(this.#notifyThread());
      // SPEC: a run that fails or is cancelled leaves no harness running on the owner's bill.
      if (status !== 'completed') this.#ctx.waitUntil(this.#killHarness(result.record.runId));
      this.#ctx.waitUntil(this.#schedule());
    }
    return result.record;
  }

  #stopPump(): void {
    this.#pump?.abort();
    this.#pump = undefined;
  }

  /** Runs a pump: the driver's batches, applied in order until the run ends or the pump is stopped. */
  async #drive(mode: 'start' | 'reattach', request?: RunnerRunRequest): Promise<void> {
    const record = this.#log.get();
    if (this.#pump || !record || isTerminalRunStatus(record.status)) return;
    const controller = new AbortController();
    this.#pump = controller;
    this.#retryAt = null;
    let end: ReadEnd = 'stopped';
    try {
      const batches = this.#driver.read({
        runId: record.runId,
        threadId: record.threadId,
        mode,
        request: async () => request ?? (await this.#restartRequest()),
        lastSeq: () => this.#log.lastSeq,
        watched: () => this.#tails.watchers > 0,
        signal: controller.signal,
      });
      for (;;) {
        const next = await batches.next();
        if (next.done) {
          end = next.value;
          break;
        }
        if (controller.signal.aborted || this.#apply(next.value) === 'rejected') {
          await batches.return('stopped');
          break;
        }
      }
    } finally {
      if (this.#pump === controller) this.#pump = undefined;
    }
    if (end === 'retry') {
      this.#retryAt = Date.now() + REATTACH_RETRY_MS;
      await this.#schedule();
    }
  }

  /** The runner request for a run started again: its stored turn, after its thread's transcript. */
  async #restartRequest(): Promise<RunnerRunRequest | null> {
    const stored = this.#log.request();
    const threadKey = this.#log.link()?.threadKey ?? null;
    if (!stored || threadKey === null) return stored;
    const history = parseTrustedJson(await this.#env.THREADS.get(this.#env.THREADS.idFromName(threadKey)).history(), 'history');
    const messages = Array.isArray(history) && history.length > 0 ? parseMessages(history, 'history', { source: 'trusted', maxMessages: Number.POSITIVE_INFINITY }) : [];
    return { ...stored, messages: [...messages, ...stored.messages] };
  }

  async #killHarness(runId: string): Promise<void> {
    try {
      const response = await this.#transport.cancel(runId);
      await response.body?.cancel();
    } catch (error) {
      console.warn(`run ${runId}: the runner could not be told to stop the harness: ${String(error)}`);
    }
  }

  /**
   * Tells the run's tenant and thread that it ended: the tenant frees its
   * slot, the thread folds the chunks into its transcript. At least once:
   * until both acknowledge, the alarm tries again (both are idempotent).
   */
  async #notifyThread(): Promise<void> {
    const link = this.#log.link();
    const record = this.#log.get();
    if (!link?.threadKey || link.notifiedAt !== null || !record || !isTerminalRunStatus(record.status)) return;
    const chunks = JSON.stringify(compactForTranscript(this.#log.chunks()));
    try {
      // The run's MAX_ACTIVE_RUNS slot goes back on every way it ends, as often as this is retried (release is idempotent).
      await tenantStub(this.#env, this.#log.request()?.tenant ?? null).release(record.runId);
      const thread = this.#env.THREADS.get(this.#env.THREADS.idFromName(link.threadKey));
      await thread.settle(record.runId, record.status, record.finishedAt ?? record.updatedAt, chunks);
      this.#log.markThreadNotified(Date.now());
    } catch (error) {
      console.warn(`run ${record.runId}: telling its thread it ended failed; the alarm retries: ${String(error)}`);
      await this.#schedule();
    }
  }

  #decide(record: RunView) {
    const link = this.#log.link();
    const live = !isTerminalRunStatus(record.status);
    const pumpActive = this.#pump !== undefined;
    return decide({
      status: record.status,
      finishedAt: record.finishedAt,
      now: Date.now(),
      pumpActive,
      // The runner's last byte, or the last durable write when this instance has read none yet
      // (a fresh pump still connecting, or none): a reattach retried after a restart gets no new budget.
      lastByteAt: Math.max(this.#driver.lastByteAt, record.updatedAt),
      threadPending: isTerminalRunStatus(record.status) && link !== null && link.threadKey !== null && link.notifiedAt === null,
      retryAt: this.#retryAt,
      stallTimeoutMs: this.#config.stallTimeoutMs,
      runTtlMs: this.#config.runTtlMs,
      startedAt: record.startedAt,
      // The last chunk stored (held in a group-commit window for at most a second before that),
      // or the last tool outcome: a harness that waits for a tool is not idle, and starts again when answered.
      lastChunkAt: Math.max(this.#log.lastAppendAt, record.startedAt, live ? this.#tools.store.lastAnsweredAt() : 0),
      runMaxMs: this.#config.limits.runMaxMs,
      ...(live && this.#tools.store.anyWaiting() ? {} : { idleTimeoutMs: this.#config.limits.idleTimeoutMs }),
    });
  }

  /** The one scheduler: arms the alarm for whichever deadline is next, or at once for one already due. */
  async #schedule(): Promise<void> {
    const record = this.#log.get();
    if (!record) return;
    const now = Date.now();
    const { action, next: watchdog } = this.#decide(record);
    const toolDeadline = isTerminalRunStatus(record.status) ? null : this.#tools.nextDeadline();
    const deadline = watchdog === null ? toolDeadline : toolDeadline === null ? watchdog : Math.min(watchdog, toolDeadline);
    const next = deadline ?? (action !== null ? now : null);
    if (next === null) return;
    const current = await this.#ctx.storage.getAlarm();
    if (current === null || current > next || isTerminalRunStatus(record.status)) {
      if (current !== next) await this.#ctx.storage.setAlarm(next);
    }
  }
}
