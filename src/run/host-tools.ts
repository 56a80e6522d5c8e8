import type { RelayConfig } from '../config.ts';
import type { StreamChunk } from '@tanstack/ai';
import { hostToolCallOf, webhookRefusal, type ToolOutcome, type ToolSpec } from '../protocol/index.ts';
import type { RunnerTransport } from '../runner/transport.ts';
import type { RunLog } from './run-log.ts';
import { ToolCallStore, type AnswerResult, type StoredToolCall, type ToolCallKind } from './tool-calls.ts';
import { toolInputProblem } from './tool-input.ts';
import { callWebhook, WEBHOOK_TRIES } from './webhook.ts';

/**
 * After the runner could not take an outcome (restarting, unreachable), try
 * again this soon, this many times; then the alarm's next look (at most 30 s
 * away while the run is live) dispatches it again.
 */
export const DELIVERY_RETRY_MS = 2_000;
export const DELIVERY_TRIES = 5;

export interface HostToolDeps {
  sql: SqlStorage;
  log: RunLog;
  transport: RunnerTransport;
  config: RelayConfig;
  /** The run object keeps running what this starts (`ctx.waitUntil`). */
  waitUntil: (work: Promise<unknown>) => void;
  fetcher?: typeof fetch;
}

/**
 * The run object's side of host tools. A stored `tool-input-available` chunk
 * is a request: it is recorded with the chunk (`record`), then executed — a
 * webhook is called, a client call waits for a person's answer — and its
 * outcome is stored before it is handed to the runner (`dispatch`), so a
 * restart at any point resumes from storage: an outcome stored is forwarded
 * again (the runner keeps the first), a webhook cut off is called again with
 * the same Idempotency-Key. Everything it knows is in storage; this instance
 * only remembers which calls it is working on right now.
 */
export class HostToolExecutor {
  readonly #deps: HostToolDeps;
  readonly #store: ToolCallStore;
  /** Calls this instance is executing or delivering; a second `dispatch` leaves them alone. */
  readonly #busy = new Set<string>();

  constructor(deps: HostToolDeps) {
    this.#deps = deps;
    this.#store = new ToolCallStore(deps.sql);
  }

  get store(): ToolCallStore {
    return this.#store;
  }

  /**
   * Records the calls a batch just stored asks for. Synchronous, and called
   * in the same turn as the append: the request and its row commit together.
   */
  record(events: readonly { seq: number; chunk: StreamChunk }[], now: number): boolean {
    const calls = [];
    let tools: ToolSpec[] | undefined;
    for (const { seq, chunk } of events) {
      const call = hostToolCallOf(chunk);
      if (call === null) continue;
      tools ??= this.#deps.log.tools();
      const tool = tools.find((candidate) => candidate.name === call.toolName);
      const kind: ToolCallKind = tool === undefined ? 'unknown' : tool.execute.type;
      calls.push({ call, seq, kind });
    }
    if (calls.length > 0) this.#store.record(calls, now);
    return calls.length > 0;
  }

  /** A person's (or a client's) answer to a client tool call; the first one wins. */
  answer(toolCallId: string, outcome: ToolOutcome): AnswerResult {
    const call = this.#store.get(toolCallId);
    if (call === null || call.kind !== 'client') return { kind: 'unknown' };
    return this.#store.answer(toolCallId, outcome, Date.now());
  }

  /** Client calls that waited `CLIENT_TOOL_TIMEOUT_SECONDS` get a `timeout` error; the harness goes on. */
  expire(now: number): boolean {
    const timeoutMs = this.#deps.config.tools.clientTimeoutMs;
    let expired = false;
    for (const call of this.#store.waitingClientCalls()) {
      if (now < call.requestedAt + timeoutMs) continue;
      this.#store.answer(call.toolCallId, { error: `timeout: nobody answered within ${timeoutMs / 1000} s (CLIENT_TOOL_TIMEOUT_SECONDS)` }, now);
      expired = true;
    }
    return expired;
  }

  /** The next time the alarm should look at tool calls: the first waiting client call's timeout. */
  nextDeadline(): number | null {
    const first = this.#store.waitingClientCalls()[0];
    return first === undefined ? null : first.requestedAt + this.#deps.config.tools.clientTimeoutMs;
  }

  /** Moves every call forward that can move: idempotent, and safe in any instance at any time. */
  dispatch(): void {
    if (this.#deps.log.isTerminal()) return;
    for (const call of this.#store.undelivered()) {
      if (this.#busy.has(call.toolCallId)) continue;
      if (call.outcome !== null) this.#track(call.toolCallId, this.#deliver(call.toolCallId, call.outcome));
      else if (call.kind === 'webhook') this.#track(call.toolCallId, this.#execute(call));
      else if (call.kind === 'unknown') {
        const names = this.#deps.log.tools().map((tool) => tool.name);
        this.#track(call.toolCallId, this.#settle(call.toolCallId, { error: `${call.name} is not one of this run's tools (${names.join(', ') || 'it has none'})` }));
      }
    }
  }

  #track(toolCallId: string, work: Promise<void>): void {
    this.#busy.add(toolCallId);
    this.#deps.waitUntil(
      work
        .catch((error: unknown) => console.warn(`tool call ${toolCallId}: ${error instanceof Error ? error.message : String(error)}`))
        .finally(() => this.#busy.delete(toolCallId)),
    );
  }

  /** Stores an outcome (unless one is stored already: the first wins), then hands the stored one on. */
  async #settle(toolCallId: string, outcome: ToolOutcome): Promise<void> {
    const result = this.#store.answer(toolCallId, outcome, Date.now());
    const stored = result.kind === 'unknown' ? null : result.call.outcome;
    if (stored !== null) await this.#deliver(toolCallId, stored);
  }

  async #execute(call: StoredToolCall): Promise<void> {
    const { config, log } = this.#deps;
    const record = log.get();
    const tool = log.tools().find((candidate) => candidate.name === call.name);
    if (!record || tool?.execute.type !== 'webhook') return;
    const outcome = await this.#runWebhook(call, tool, tool.execute.url, record.runId, record.threadId, config);
    await this.#settle(call.toolCallId, outcome);
  }

  async #runWebhook(call: StoredToolCall, tool: ToolSpec, url: string, runId: string, threadId: string, config: RelayConfig): Promise<ToolOutcome> {
    const problem = toolInputProblem(tool.inputSchema, call.input);
    if (problem !== null) return { error: `invalid input for ${tool.name}: ${problem}` };
    // Checked again at call time: the operator may have narrowed TOOL_WEBHOOK_ORIGINS since the run began.
    const refusal = webhookRefusal(url, { webhookOrigins: config.tools.webhookOrigins, allowLoopbackHttp: config.apiToken === undefined });
    if (refusal !== null) return { error: `the relay no longer calls this webhook: ${refusal}` };
    const secret = config.tools.webhookSecret;
    if (secret === undefined) return { error: 'the relay has no TOOL_WEBHOOK_SECRET to sign the webhook request with' };
    return callWebhook({
      url,
      secret,
      body: { runId, threadId, toolCallId: call.toolCallId, name: call.name, input: call.input },
      timeoutMs: config.tools.timeoutMs,
      // SPEC's 3 tries hold across restarts: a request an earlier instance sent may have reached the webhook.
      tries: WEBHOOK_TRIES - call.attempts,
      onAttempt: () => this.#store.noteAttempt(call.toolCallId),
      ...(this.#deps.fetcher ? { fetcher: this.#deps.fetcher } : {}),
    });
  }

  async #deliver(toolCallId: string, outcome: ToolOutcome): Promise<void> {
    for (let i = 0; i < DELIVERY_TRIES; i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, DELIVERY_RETRY_MS));
      const record = this.#deps.log.get();
      if (!record || this.#deps.log.isTerminal()) return;
      let problem: string;
      try {
        const response = await this.#deps.transport.toolResult(record.runId, { toolCallId, outcome });
        await response.body?.cancel().catch(() => undefined);
        // 404: the runner forgot the run, 409: its harness is gone — nobody waits any more, and the driver ends the run.
        if (response.status === 200 || response.status === 404 || response.status === 409) {
          this.#store.markDelivered(toolCallId, Date.now());
          return;
        }
        problem = `it answered ${response.status}`;
      } catch (error) {
        problem = error instanceof Error ? error.message : String(error);
      }
      console.warn(`run ${record.runId}: the runner did not take tool call ${toolCallId}'s outcome (${problem}); trying again`);
    }
  }
}
