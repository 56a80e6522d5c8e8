import { DurableObject } from 'cloudflare:workers';
import type { StreamChunk } from '@tanstack/ai';
import { readConfig, type RelayEnv } from '../config.ts';
import { apiErrorBody, isObject, MAX_TOOL_RESULT_BYTES, parseClientFrame, parseRequestJson, parseSeqCursor, parseToolResult, toolAnswerRefusal, type RunView, type ToolAnswerRefusal, type ToolResult, type ToolResultAnswerFrame } from '../protocol/index.ts';
import { transportFor } from '../runner/select.ts';
import { httpTail } from './http-tail.ts';
import { RunLifecycle, type AcceptResult, type RunLookup, type StartCall } from './lifecycle.ts';
import { RunLog } from './run-log.ts';
import { parseAttachment } from './tails.ts';

/**
 * What the Worker asks for: the run log's init, stamped by the object itself,
 * and the thread's transcript so far for the runner (not stored).
 */
export type CreateRunCall = StartCall;

export type CreateRunResult =
  | { kind: 'created'; record: RunView }
  | { kind: 'existing'; record: RunView }
  /** The run exists and was created from another body (an `Idempotency-Key` reused). */
  | { kind: 'conflict'; record: RunView }
  /** A legacy record under this id could not be read; it was set aside. */
  | { kind: 'unreadable'; reason: string };

export type { RunLookup };

/** Internal paths the Worker forwards streaming requests to. */
export const RUN_OBJECT_PATHS = { ws: '/ws', events: '/events' } as const;

/**
 * One Durable Object per run. It routes each entry point — RPC, fetch, alarm,
 * WebSocket events — to the run's lifecycle (which owns the log, the tails,
 * the driver and the alarm) and holds no logic of its own.
 */
export class RunObject extends DurableObject<RelayEnv> {
  readonly #log: RunLog;
  readonly #lifecycle: RunLifecycle;
  readonly #maxClients: number;

  constructor(ctx: DurableObjectState, env: RelayEnv) {
    super(ctx, env);
    const config = readConfig(env);
    this.#maxClients = config.limits.maxClientsPerRun;
    this.#log = new RunLog(ctx.storage);
    const transport = transportFor(env, config, (runId) => this.#log.link()?.sandboxId ?? runId);
    this.#lifecycle = new RunLifecycle(ctx, env, config, this.#log, transport);
    // Keep-alive pings are answered without waking a hibernated object.
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair('ping', 'pong'));
  }

  async create(call: CreateRunCall): Promise<CreateRunResult> {
    // A legacy run under this id is migrated first, so `open` sees it.
    const existing = this.#lifecycle.lookup(call.runId);
    if (existing.kind === 'unreadable') return existing;
    const opened = await this.#lifecycle.create(call);
    if (opened.created) return { kind: 'created', record: opened.record };
    return { kind: opened.requestHash === call.requestHash ? 'existing' : 'conflict', record: opened.record };
  }

  /** The record, or `null`. A read: it starts no pump and arms no alarm. */
  async record(runId: string): Promise<RunView | null> {
    const found = this.#lifecycle.lookup(runId);
    return found.kind === 'found' ? found.record : null;
  }

  /** The record for a client that follows the run, restarting the pump of a live run that has none here. */
  async ensureDriving(runId: string): Promise<RunLookup> {
    const found = this.#lifecycle.lookup(runId);
    if (found.kind === 'found') this.#lifecycle.ensureDriving();
    return found;
  }

  /** A client tool call's answer: the first one wins (SPEC "Interactive runs"). */
  async answerToolCall(runId: string, result: ToolResult): Promise<{ kind: 'answered'; record: RunView } | { kind: ToolAnswerRefusal } | { kind: 'missing' }> {
    const found = this.#lifecycle.lookup(runId);
    if (found.kind !== 'found') return { kind: 'missing' };
    // RPC hands over a plain object; read it as the wire body it came from.
    const outcome: unknown = result.outcome;
    return this.#lifecycle.answer(parseToolResult({ toolCallId: result.toolCallId, ...(isObject(outcome) ? outcome : {}) }));
  }

  /** Moves a running run to `aborted` (durably, first), then stops its harness. Idempotent. */
  async cancel(runId: string): Promise<RunLookup> {
    const found = this.#lifecycle.lookup(runId);
    if (found.kind !== 'found') return found;
    const record = await this.#lifecycle.cancel();
    return record ? { kind: 'found', record } : { kind: 'missing' };
  }

  /**
   * The producer interface: appends chunks as the next seqs, fans them out,
   * and applies the lifecycle rules. The runner pump feeds the lifecycle in
   * production; tests feed it here.
   */
  ingest(chunks: StreamChunk[]): AcceptResult {
    return this.#lifecycle.ingest(chunks);
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const runId = url.searchParams.get('runId') ?? '';
    const fromSeq = parseSeqCursor(url.searchParams.get('fromSeq'));
    const found = this.#lifecycle.lookup(runId);
    if (found.kind === 'unreadable') return Response.json(apiErrorBody('run_unreadable', found.reason), { status: 410 });
    if (found.kind === 'missing') return Response.json(apiErrorBody('run_not_found', `No run ${runId} exists (it may have expired).`), { status: 404 });
    if (fromSeq === null) return Response.json(apiErrorBody('invalid_from_seq', 'fromSeq must be an integer >= -1.'), { status: 400 });
    // Before any upgrade: every tail (WebSocket or HTTP) counts, hibernated sockets included.
    if (this.#lifecycle.tails.watchers >= this.#maxClients) {
      const message = `Run ${runId} already has ${this.#maxClients} clients following it (MAX_CLIENTS_PER_RUN). Close one, or retry later.`;
      return Response.json(apiErrorBody('too_many_clients', message), { status: 429, headers: { 'retry-after': '5' } });
    }
    this.#lifecycle.ensureDriving();
    if (url.pathname === RUN_OBJECT_PATHS.ws) {
      const pair = new WebSocketPair();
      const rights = { canCancel: url.searchParams.get('canCancel') === '1', canRespond: url.searchParams.get('canRespond') === '1' };
      this.#lifecycle.tails.acceptSocket(pair[1], fromSeq, rights);
      return new Response(null, { status: 101, webSocket: pair[0] });
    }
    if (url.pathname === RUN_OBJECT_PATHS.events) {
      return httpTail(this.#lifecycle.tails, fromSeq, url.searchParams.get('format') === 'sse' ? 'sse' : 'ndjson');
    }
    return Response.json(apiErrorBody('not_found', 'Unknown run object path.'), { status: 404 });
  }

  override async alarm(): Promise<void> {
    await this.#lifecycle.alarm();
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    let frame = null;
    try {
      frame = typeof message === 'string' ? parseClientFrame(parseRequestJson(message, 'frame')) : null;
    } catch {
      frame = null;
    }
    if (!frame) return;
    const attachment = parseAttachment(ws.deserializeAttachment());
    const record = this.#log.get();
    if (frame.type === 'abort' && attachment?.canCancel && record && (frame.runId === undefined || frame.runId === record.runId)) {
      await this.#lifecycle.cancel();
    }
    if (frame.type === 'tool_result' && attachment) {
      // Answered on this socket only, with what the HTTP route would have said.
      let answer: ToolResultAnswerFrame = { type: 'tool_result_answer', toolCallId: frame.toolCallId, status: 200 };
      if (JSON.stringify(frame.outcome).length > MAX_TOOL_RESULT_BYTES) {
        // It could not become one chunk; the HTTP route's body limit answers the same.
        answer = { ...answer, status: 413, error: { code: 'payload_too_large', message: `A tool result is at most ${MAX_TOOL_RESULT_BYTES} bytes of JSON.` } };
      } else if (!attachment.canRespond) {
        answer = { ...answer, status: 403, error: { code: 'forbidden', message: 'This connection only reads the run; connect with credentials that may answer tool calls.' } };
      } else {
        const result = this.#lifecycle.answer({ toolCallId: frame.toolCallId, outcome: frame.outcome });
        if (result.kind === 'missing') answer = { ...answer, status: 404, error: { code: 'run_not_found', message: 'This run no longer exists.' } };
        else if (result.kind !== 'answered') {
          const { status, code, message } = toolAnswerRefusal(result.kind, frame.toolCallId);
          answer = { ...answer, status, error: { code, message } };
        }
      }
      try {
        ws.send(JSON.stringify(answer));
      } catch {
        // The socket closed meanwhile; the answer (if taken) stands.
      }
    }
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    this.#lifecycle.tails.onClose(ws, code);
  }

  override async webSocketError(): Promise<void> {
    // The runtime closes the socket; its cursor dies with it. Nothing to clean.
  }
}
