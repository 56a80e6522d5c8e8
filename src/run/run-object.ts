import { DurableObject } from 'cloudflare:workers';
import type { RunError, TerminalRunStatus } from '@tanstack/ai';
import { isTerminalRunStatus } from '@tanstack/ai';
import { readConfig, type RelayConfig, type RelayEnv } from '../config.ts';
import type { StreamChunk } from '@tanstack/ai';
import {
  apiErrorBody,
  CLOSE_CODES,
  parseClientFrame,
  parseSeqCursor,
  runErrorOf,
  terminalChunkType,
  type RunView,
  type RunnerRunRequest,
} from '../protocol/index.ts';
import { transportFor } from '../runner/select.ts';
import type { RunnerTransport } from '../runner/transport.ts';
import { Driver, type AcceptResult, type DriverSink, type IncomingChunk } from './driver.ts';
import { httpTail } from './http-tail.ts';
import { migrateLegacyRun } from './legacy.ts';
import { RunLog, TerminalRunError, type RunInit, type StoredEvent } from './run-log.ts';
import { parseAttachment, safeClose, Tails } from './tails.ts';
import { decide, REATTACH_RETRY_MS } from './watchdog.ts';
import { compactForTranscript } from '../thread/compact.ts';

/** What the Worker asks for: the run log's init, stamped by the object itself. */
export type CreateRunCall = Omit<RunInit, 'now'>;

export type CreateRunResult =
  | { kind: 'created'; record: RunView }
  | { kind: 'existing'; record: RunView }
  /** The run exists and was created from another body (an `Idempotency-Key` reused). */
  | { kind: 'conflict'; record: RunView };

/** Internal paths the Worker forwards streaming requests to. */
export const RUN_OBJECT_PATHS = { ws: '/ws', events: '/events' } as const;

/**
 * One Durable Object per run. It wires the parts — the log (SQLite), the
 * tails (hibernatable WebSockets and HTTP streams), the driver (the runner's
 * NDJSON stream) and the watchdog (the alarm) — and holds no logic of its own
 * beyond deciding which part a request goes to.
 */
export class RunObject extends DurableObject<RelayEnv> {
  readonly #config: RelayConfig;
  readonly #log: RunLog;
  readonly #tails: Tails;
  readonly #transport: RunnerTransport;
  readonly #driver: Driver;

  constructor(ctx: DurableObjectState, env: RelayEnv) {
    super(ctx, env);
    this.#config = readConfig(env);
    this.#log = new RunLog(ctx.storage);
    this.#tails = new Tails(ctx, this.#log);
    this.#transport = transportFor(env, this.#config, (runId) => this.#log.link()?.sandboxId ?? runId);
    this.#driver = new Driver(this.#transport, this.#sink());
    // Keep-alive pings are answered without waking a hibernated object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('ping', 'pong'));
  }

  async create(call: CreateRunCall): Promise<CreateRunResult> {
    // A legacy run under this id is migrated first, so `open` sees it.
    this.#load(call.runId);
    const opened = this.#log.open({ ...call, now: Date.now() });
    if (!opened.created) {
      this.#resume(opened.record);
      return { kind: opened.requestHash === call.requestHash ? 'existing' : 'conflict', record: opened.record };
    }
    await this.#schedule();
    this.ctx.waitUntil(this.#drive('start', call.request));
    return { kind: 'created', record: opened.record };
  }

  async record(runId: string): Promise<RunView | null> {
    const record = this.#load(runId);
    if (record) this.#resume(record);
    return record;
  }

  /** Moves a running run to `aborted` (durably, first), then stops its harness. Idempotent. */
  async cancel(runId: string): Promise<RunView | null> {
    const record = this.#load(runId);
    if (!record || isTerminalRunStatus(record.status)) return record;
    this.#driver.stop();
    const finished = this.#finish('aborted');
    // The output gate holds this request until `aborted` is durable.
    this.ctx.waitUntil(
      this.#transport.cancel(runId).then(
        (response) => void response.body?.cancel(),
        (error: unknown) => console.warn(`run ${runId}: the runner could not be told to cancel: ${String(error)}`),
      ),
    );
    await this.#schedule();
    return finished ?? this.#log.get();
  }

  /**
   * The producer interface: appends chunks as the next seqs, fans them out,
   * and applies the lifecycle rules (RUN_FINISHED completes, RUN_ERROR fails).
   * The runner pump feeds it in production; tests feed it directly.
   */
  ingest(chunks: StreamChunk[]): AcceptResult {
    return this.#accept(chunks.map((chunk) => ({ raw: JSON.stringify(chunk), chunk })));
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const runId = url.searchParams.get('runId') ?? '';
    const fromSeq = parseSeqCursor(url.searchParams.get('fromSeq'));
    const record = this.#load(runId);
    if (!record) return Response.json(apiErrorBody('run_not_found', `No run ${runId} exists (it may have expired).`), { status: 404 });
    if (fromSeq === null) return Response.json(apiErrorBody('invalid_from_seq', 'fromSeq must be an integer >= -1.'), { status: 400 });
    this.#resume(record);
    if (url.pathname === RUN_OBJECT_PATHS.ws) {
      const pair = new WebSocketPair();
      this.#tails.accept(pair[1], fromSeq, url.searchParams.get('canCancel') === '1');
      return new Response(null, { status: 101, webSocket: pair[0] });
    }
    if (url.pathname === RUN_OBJECT_PATHS.events) {
      return httpTail(this.#log, fromSeq, url.searchParams.get('format') === 'sse' ? 'sse' : 'ndjson');
    }
    return Response.json(apiErrorBody('not_found', 'Unknown run object path.'), { status: 404 });
  }

  override async alarm(): Promise<void> {
    const record = this.#log.get();
    if (!record) return;
    const { action } = this.#decide(record);
    if (action === 'expire') {
      this.#tails.closeAll(CLOSE_CODES.goingAway, 'run expired');
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.#log.reset();
      return;
    }
    if (action === 'reattach') this.#resume(record);
    if (action === 'notify') await this.#notifyThread();
    if (action === 'give-up') {
      const seconds = Math.round(this.#config.stallTimeoutMs / 1000);
      this.#driver.fail('runner_unavailable', `The harness runner could not be reattached for ${seconds} s (it did not come back after a restart), so the run was stopped.`);
    }
    if (action === 'stall') {
      this.#driver.stop();
      const seconds = Math.round(this.#config.stallTimeoutMs / 1000);
      this.#driver.fail('stalled', `The harness wrote nothing for ${seconds} s (STALL_TIMEOUT_SECONDS), so the run was stopped.`);
      this.ctx.waitUntil(this.#transport.cancel(record.runId).then((r) => void r.body?.cancel(), () => undefined));
    }
    await this.#schedule();
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    let frame = null;
    try {
      frame = typeof message === 'string' ? parseClientFrame(JSON.parse(message)) : null;
    } catch {
      frame = null;
    }
    if (!frame) return;
    const attachment = parseAttachment(ws.deserializeAttachment());
    const record = this.#log.get();
    if (frame.type === 'abort' && attachment?.canCancel && record && (frame.runId === undefined || frame.runId === record.runId)) {
      await this.cancel(record.runId);
    }
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    // Complete the close handshake, but never echo 1005/1006: they are not sendable codes.
    safeClose(ws, code === 1005 || code === 1006 || code === 1015 ? 1000 : code, '');
  }

  override async webSocketError(): Promise<void> {
    // The runtime closes the socket; its cursor dies with it. Nothing to clean.
  }

  /** The record, migrating a legacy key-value run on its first read. `null` for an unknown run. */
  #load(runId: string): RunView | null {
    let record = this.#log.get();
    if (!record && runId !== '' && migrateLegacyRun(this.ctx.storage, runId, Date.now())) {
      this.#log.reset();
      record = this.#log.get();
      // A migrated run is held to the same retention as any other.
      this.ctx.waitUntil(this.#schedule());
    }
    return record;
  }

  /** A live run with no pump in this instance (the object restarted): reattach from the durable cursor. */
  #resume(record: RunView): void {
    if (isTerminalRunStatus(record.status) || this.#driver.active) return;
    this.ctx.waitUntil(this.#drive('reattach', this.#log.request()));
    this.ctx.waitUntil(this.#schedule());
  }

  /** Runs the pump; a reattach that found the runner restarting is retried by the alarm. */
  async #drive(mode: 'start' | 'reattach', request: RunnerRunRequest | null): Promise<void> {
    const result = await this.#driver.drive(mode, request);
    if (result === 'retry') {
      const at = Date.now() + REATTACH_RETRY_MS;
      const current = await this.ctx.storage.getAlarm();
      if (current === null || current > at) await this.ctx.storage.setAlarm(at);
    }
  }

  #finish(status: TerminalRunStatus, error?: RunError): RunView | null {
    const result = this.#log.finish(status, error, Date.now());
    if (result?.changed) {
      this.#tails.settle(result.record);
      this.ctx.waitUntil(this.#notifyThread());
    }
    return result?.record ?? null;
  }

  /**
   * Tells the run's thread that it ended, with the chunks its transcript is
   * folded from. At least once: until the thread acknowledges, the alarm
   * tries again (`settle` on the thread is idempotent).
   */
  async #notifyThread(): Promise<void> {
    const link = this.#log.link();
    const record = this.#log.get();
    if (!link?.threadKey || link.notifiedAt !== null || !record || !isTerminalRunStatus(record.status)) return;
    const chunks = compactForTranscript(this.#log.chunks());
    try {
      const thread = this.env.THREADS.get(this.env.THREADS.idFromName(link.threadKey));
      await thread.settle(record.runId, record.status, record.finishedAt ?? record.updatedAt, chunks);
      this.#log.markThreadNotified(Date.now());
    } catch (error) {
      console.warn(`run ${record.runId}: telling its thread it ended failed; the alarm retries: ${String(error)}`);
      await this.#schedule();
    }
  }

  #decide(record: RunView) {
    const link = this.#log.link();
    return decide({
      status: record.status,
      finishedAt: record.finishedAt,
      now: Date.now(),
      pumpActive: this.#driver.active,
      // A pump knows when the runner last wrote; without one, the last durable write is the best evidence.
      threadPending: isTerminalRunStatus(record.status) && link !== null && link.threadKey !== null && link.notifiedAt === null,
      lastByteAt: this.#driver.active ? this.#driver.lastByteAt : Math.max(this.#driver.lastByteAt, record.updatedAt),
      stallTimeoutMs: this.#config.stallTimeoutMs,
      runTtlMs: this.#config.runTtlMs,
    });
  }

  /** Arms the one alarm for whichever deadline is next. */
  async #schedule(): Promise<void> {
    const record = this.#log.get();
    if (!record) return;
    const { next } = this.#decide(record);
    if (next === null) return;
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > next || isTerminalRunStatus(record.status)) {
      if (current !== next) await this.ctx.storage.setAlarm(next);
    }
  }

  #sink(): DriverSink {
    const log = this.#log;
    return {
      // The object is named by its run id; the record is where it is written down.
      get runId() {
        return log.get()?.runId ?? '';
      },
      get threadId() {
        return log.get()?.threadId ?? '';
      },
      lastSeq: () => this.#log.lastSeq,
      isTerminal: () => this.#log.isTerminal(),
      accept: (chunks) => this.#accept(chunks),
      watchers: () => this.#tails.count + this.#log.subscribers,
    };
  }

  #accept(incoming: IncomingChunk[]): AcceptResult {
    const end = incoming.findIndex((c) => terminalChunkType(c.chunk) !== null);
    const chunks = end === -1 ? incoming : incoming.slice(0, end + 1);
    if (chunks.length === 0) return this.#log.get()?.status === 'running' ? 'open' : 'rejected';
    let range;
    try {
      range = this.#log.append(
        chunks.map((c) => c.raw),
        Date.now(),
      );
    } catch (error) {
      if (error instanceof TerminalRunError) return 'rejected';
      throw error;
    }
    const events: StoredEvent[] = chunks.map((c, i) => ({ seq: range.firstSeq + i, raw: c.raw }));
    this.#tails.publish(events);
    if (end === -1) return 'open';
    const last = chunks[chunks.length - 1]!.chunk;
    if (last.type === 'RUN_FINISHED') this.#finish('completed');
    else this.#finish('failed', runErrorOf(last));
    this.ctx.waitUntil(this.#schedule());
    return 'terminal';
  }
}
