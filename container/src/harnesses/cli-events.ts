import type { WireChunk } from '../chunk-writer.ts';

/**
 * What the CLI adapters (`@tanstack/ai-claude-code`, `-codex` 0.2.3) get wrong
 * about the CLIs' own events, corrected on the way out of the adapter:
 *
 * - Claude Code reports an API failure as a `result` with `subtype: "success"`
 *   and `is_error: true`; the adapter reads only `subtype` and yields
 *   `RUN_FINISHED`. The result message is seen here (through the adapter's
 *   provider log) and that `RUN_FINISHED` becomes the error it is.
 * - Codex writes a transient stream failure as an `error` event
 *   ("Reconnecting... 1/5 …") and recovers; the adapter makes every `error` a
 *   `RUN_ERROR`, and `chat()` stops at the first one. Such a notice is dropped:
 *   a real failure still ends the turn with `turn.failed` (or a final `error`).
 * - Codex numbers its items per process (`item_0`, `item_1`, …) and the
 *   adapter uses them as tool call ids, so every turn of a thread reuses them.
 *   A tool call id pairs a call with its result in the thread's transcript
 *   and is a host tool call's webhook Idempotency-Key: the run id is put in
 *   front of it.
 */
export interface CliEventTap {
  /** Each raw CLI event, as the adapter logs it before translating. */
  onEvent(event: unknown): void;
  /** The adapter's chunk as it should be, or `null` to drop it. */
  transform(chunk: WireChunk): WireChunk | null;
}

type Fields = Record<string, unknown>;

function record(value: unknown): Fields | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

export function claudeCodeTap(): CliEventTap {
  let failedResult: Fields | undefined;
  return {
    onEvent(event) {
      const message = record(event);
      if (message?.type === 'result' && message.is_error === true) failedResult = message;
    },
    transform(chunk) {
      if (chunk.type !== 'RUN_FINISHED' || failedResult === undefined) return chunk;
      const errors = Array.isArray(failedResult.errors) ? failedResult.errors.filter((e): e is string => typeof e === 'string') : [];
      const text = typeof failedResult.result === 'string' && failedResult.result.trim() !== '' ? failedResult.result : errors.join('; ');
      const message = text !== '' ? text : `Claude Code reported an error result (${String(failedResult.subtype)}).`;
      // SPEC names this case `harness_failed`; the message is the CLI's own ("API Error: 401 …").
      return { type: 'RUN_ERROR', message, code: 'harness_failed', timestamp: chunk.timestamp ?? Date.now(), ...(chunk.usage !== undefined ? { usage: chunk.usage } : {}) };
    },
  };
}

/** Codex's retry notice: `Reconnecting... <attempt>/<max>` (codex-rs `StreamError`). */
const CODEX_RETRY_NOTICE = /^Reconnecting\.\.\.\s*\d+\/\d+/;

export function codexTap(runId: string): CliEventTap {
  return {
    onEvent() {},
    transform(chunk) {
      if (chunk.type === 'RUN_ERROR' && typeof chunk.message === 'string' && CODEX_RETRY_NOTICE.test(chunk.message)) return null;
      // Codex numbers its items per process (`item_0`, …): every turn of a thread would reuse them,
      // merging one turn's messages and calls with another's in a UI, the transcript and a webhook's Idempotency-Key.
      const scoped = (id: unknown) => (typeof id === 'string' && !id.startsWith(`${runId}-`) ? `${runId}-${id}` : id);
      if (typeof chunk.toolCallId !== 'string' && typeof chunk.messageId !== 'string' && typeof chunk.parentMessageId !== 'string') return chunk;
      const out = { ...chunk };
      if (typeof chunk.toolCallId === 'string') out.toolCallId = scoped(chunk.toolCallId);
      if (typeof chunk.messageId === 'string') out.messageId = scoped(chunk.messageId);
      if (typeof chunk.parentMessageId === 'string') out.parentMessageId = scoped(chunk.parentMessageId);
      return out;
    },
  };
}

interface TappableAdapter {
  chatStream(options: { logger: object }): AsyncIterable<WireChunk>;
}

/**
 * `adapter` with the tap applied inside its `chatStream`, before `chat()` sees
 * a chunk (`chat()` stops at the first `RUN_ERROR` it sees). The CLI adapters
 * log every raw CLI event (`logger.provider(…, {chunk: event})`) before
 * translating it, the one place its fields (`is_error`) can still be read.
 * Everything else is the adapter's own (its prototype).
 */
export function tappedAdapter<A extends object>(adapter: A, tap: CliEventTap): A {
  const inner = adapter as unknown as TappableAdapter;
  return Object.create(adapter, {
    chatStream: {
      async *value(options: { logger: object }) {
        const logger = options.logger as { provider(message: string, meta?: { chunk?: unknown }): void };
        const tapped = Object.create(logger, {
          provider: {
            value(message: string, meta?: { chunk?: unknown }) {
              tap.onEvent(meta?.chunk);
              logger.provider(message, meta);
            },
          },
        });
        for await (const chunk of inner.chatStream.call(adapter, { ...options, logger: tapped })) {
          const corrected = tap.transform(chunk);
          if (corrected !== null) yield corrected;
        }
      },
    },
  }) as A;
}
