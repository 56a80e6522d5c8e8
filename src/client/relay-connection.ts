import type { RunAgentResumeItem, StreamChunk } from '@tanstack/ai';
import type { ConnectConnectionAdapter } from '@tanstack/ai-client';
import { hostToolCallOf, type HostToolCall, type ToolOutcome } from '../protocol/index.ts';
import { attachRun, type WebSocketConstructor } from './attach-run.ts';
import type { BackoffOptions } from './backoff.ts';
import { readRunRecord, runUrl } from './run-record.ts';
import { answerToolCall, ToolAnswerError } from './tool-calls.ts';

export interface RelayConnectionOptions {
  /** Where the relay is, e.g. `https://relay.example.com`. */
  baseUrl: string;
  /** The run this connection joins (from `POST /runs`). */
  runId: string;
  /** The run's `attachToken` from `POST /runs` (it may answer tool calls), or an API token. */
  token?: string;
  /** Default: the global `WebSocket`. In Node 20, pass `ws`'s `WebSocket`. */
  WebSocketImpl?: WebSocketConstructor;
  fetchImpl?: typeof fetch;
  backoff?: BackoffOptions;
}

/** A connection for `@tanstack/ai-client`'s `ChatClient`: `joinRun` tails the run, `connect` only resumes it. */
export type RelayConnection = ConnectConnectionAdapter & {
  joinRun: (runId: string, abortSignal?: AbortSignal) => AsyncIterable<StreamChunk>;
};

/**
 * A `@tanstack/ai-client` connection adapter that joins one relay run and
 * answers its client tool calls, so a `ChatClient` with client tools
 * (`execute`) can drive a run it did not start.
 *
 * ChatClient hands a client tool's result to its connection only as the next
 * request (`connect`), once the current stream has ended; the relay's run
 * stays running until it is answered, so on the run's own stream the result
 * would stay in the browser (README, "With `@tanstack/ai-client`"). So the
 * adapter shows a waiting call the way TanStack's own server does, as an
 * interrupt: it ends the tail there with a `RUN_FINISHED` whose outcome is an
 * `interrupt` (the adapter's, not the run's); ChatClient runs the tool and
 * resumes with `runContext.resume`; `connect` posts that answer to `POST
 * /runs/:runId/tool-results` and tails on from the same seq instead of
 * starting a new run.
 *
 * @example
 * ```ts
 * const { runId, attachToken } = await (await fetch('/runs', { method: 'POST', body })).json();
 * const chat = new ChatClient({
 *   connection: relayConnection({ baseUrl: '', runId, token: attachToken }),
 *   tools: [askTool.client(async (input) => ({ answer: prompt(input.q) }))],
 *   initialResumeSnapshot: { resumeState: { threadId: runId, runId } }, // the run to join
 * });
 * chat.attach(); // joins it: `joinRun`, then the tool's answer through `connect`
 * ```
 */
export function relayConnection(options: RelayConnectionOptions): RelayConnection {
  const fetchImpl = options.fetchImpl ?? globalThis.fetch.bind(globalThis);
  /** The seq of the client tool call the last tail stopped at; the resumed tail starts after it. */
  let pausedAt: number | null = null;
  /** interrupt id → the relay's tool call id, for the calls handed to ChatClient and not yet answered. */
  const interrupts = new Map<string, string>();

  async function* tail(fromSeq: number, signal: AbortSignal | undefined): AsyncGenerator<StreamChunk> {
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal?.reason);
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
    const queue = new ChunkQueue();
    const run = attachRun({
      baseUrl: options.baseUrl,
      runId: options.runId,
      fromSeq,
      signal: stop.signal,
      ...(options.token !== undefined && { token: options.token }),
      ...(options.WebSocketImpl !== undefined && { WebSocketImpl: options.WebSocketImpl }),
      ...(options.backoff !== undefined && { backoff: options.backoff }),
      fetchImpl,
      onChunk: (chunk, seq) => queue.push(chunk, seq),
    });
    run.done.then(
      () => queue.end(),
      (error: unknown) => queue.fail(error),
    );
    let threadId = options.runId; // a run's thread is its own id unless POST /runs named one
    try {
      for (;;) {
        const next = await queue.next();
        if (next === null) return;
        const { chunk, seq } = next;
        if ('threadId' in chunk && typeof chunk.threadId === 'string') threadId = chunk.threadId;
        const call = hostToolCallOf(chunk);
        if (call?.client !== true) {
          yield chunk;
          continue;
        }
        // ChatClient runs a tool on this chunk itself; only the interrupt below may ask it, or it would run twice.
        if (!(await isWaiting(call.toolCallId, stop.signal))) continue; // answered already: its TOOL_CALL_RESULT follows
        pausedAt = seq;
        const interrupt = interruptOf(call);
        interrupts.set(interrupt.id, call.toolCallId);
        // AG-UI types `type` as an enum member, whose wire value is this string (the enum is not imported at runtime).
        yield { type: 'RUN_FINISHED', runId: options.runId, threadId, timestamp: Date.now(), outcome: { type: 'interrupt', interrupts: [interrupt] } } as StreamChunk;
        return;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
  }

  /** Whether the record still lists the call as waiting; an unreadable record counts as waiting (a late answer gets a 409). */
  async function isWaiting(toolCallId: string, signal: AbortSignal): Promise<boolean> {
    const record = await readRunRecord(fetchImpl, runUrl(options, ''), signal);
    if (record === null || record === 'not_found') return true;
    return (record.pendingToolCalls ?? []).some((call) => call.toolCallId === toolCallId);
  }

  return {
    joinRun(runId, abortSignal) {
      if (runId !== options.runId) throw new Error(`relayConnection joins run ${options.runId}, not ${runId}: make one connection per run.`);
      return tail(-1, abortSignal);
    },
    async *connect(_messages, _data, abortSignal, runContext) {
      // Answers are matched by the interrupt ids this adapter minted, not by `parentRunId`: ChatClient
      // names the run it resumes after its own id for the previous continuation, not the relay's.
      const answers = runContext?.resume ?? [];
      if (pausedAt === null || answers.length === 0) {
        throw new Error(`relayConnection only joins run ${options.runId} and answers its client tool calls; a new turn is POST /runs with threadId.`);
      }
      for (const item of answers) {
        const toolCallId = interrupts.get(item.interruptId);
        if (toolCallId === undefined) throw new Error(`relayConnection: no client tool call behind interrupt ${item.interruptId}.`);
        try {
          await answerToolCall(fetchImpl, options, toolCallId, outcomeOf(item));
        } catch (error) {
          // Another tab answered first; the tail carries that answer's TOOL_CALL_RESULT.
          if (!(error instanceof ToolAnswerError && error.code === 'already_answered')) throw error;
        }
        interrupts.delete(item.interruptId);
      }
      yield* tail(pausedAt, abortSignal);
    },
  };
}

/**
 * The legacy client-tool interrupt shape ChatClient's interrupt manager still
 * binds without a server-computed binding: reason `client_tool_input`,
 * metadata `{kind: 'client_tool', toolName, input}`.
 */
function interruptOf(call: HostToolCall) {
  return {
    id: `client_tool_${call.toolCallId}`,
    reason: 'client_tool_input',
    toolCallId: call.toolCallId,
    metadata: { kind: 'client_tool', toolName: call.toolName, input: call.input ?? {} },
  };
}

/**
 * A resolved entry's payload is the tool's output. ChatClient resumes a failed
 * `execute` as payload `{error: message}`, indistinguishable from an output of
 * that shape, and TanStack's own server takes it as the output too.
 */
function outcomeOf(item: RunAgentResumeItem): ToolOutcome {
  return item.status === 'cancelled' ? { error: 'The client cancelled this tool call.' } : { output: item.payload ?? null };
}

/** attachRun's callbacks as an async iterator: chunks in order, then the end or the tail's error. */
class ChunkQueue {
  #items: { chunk: StreamChunk; seq: number }[] = [];
  #ended = false;
  #error: { reason: unknown } | null = null;
  #wake: (() => void) | null = null;

  push(chunk: StreamChunk, seq: number): void {
    this.#items.push({ chunk, seq });
    this.#wake?.();
  }
  end(): void {
    this.#ended = true;
    this.#wake?.();
  }
  fail(reason: unknown): void {
    this.#error = { reason };
    this.#wake?.();
  }
  /** The next chunk, `null` at the end; throws the tail's error once the chunks before it are taken. */
  async next(): Promise<{ chunk: StreamChunk; seq: number } | null> {
    for (;;) {
      const item = this.#items.shift();
      if (item !== undefined) return item;
      if (this.#error !== null) throw this.#error.reason;
      if (this.#ended) return null;
      await new Promise<void>((resolve) => (this.#wake = resolve));
      this.#wake = null;
    }
  }
}
