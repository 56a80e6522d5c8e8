import type { HarnessName } from '../../../src/protocol/index.ts';
import type { WireChunk } from '../chunk-writer.ts';
import { classifyRunError } from './run-errors.ts';
import { toWireShape } from './wire-shape.ts';

/**
 * A harness's chunks as one well-formed AG-UI 1.0 run, in the one dialect the
 * relay reads (SPEC "Harness chunks: one dialect"):
 *
 * - each chunk in 0.58's wire shape (`toWireShape`: deltas only, extras under
 *   `metadata.tanstack`, `usage` as an array);
 * - `RUN_STARTED` first and once, with the relay's `runId` and `threadId` (the
 *   OpenAI adapter generates its own; Anthropic errors come with none at all);
 * - exactly one terminal chunk, last. The relay ends a run at its first, but an
 *   adapter may yield more after it (Claude Code's `file.changed` diff comes
 *   after `RUN_FINISHED`; an agent loop finishes once per model turn), so the
 *   terminal is held back and written by `finish`. An error is never replaced
 *   by a later `RUN_FINISHED`: a run never "completes" with an error;
 * - before it, whatever is still open is closed (a mid-stream error leaves a
 *   `TEXT_MESSAGE_START` without its end), as `verifyEvents` requires;
 * - a `RUN_ERROR`'s code from SPEC's closed list (`classifyRunError`).
 */
export class RunNormalizer {
  readonly #harness: HarnessName;
  readonly #runId: string;
  readonly #threadId: string;
  #started = false;
  #terminal: WireChunk | undefined;
  readonly #openText = new Set<string>();
  readonly #openReasoning = new Set<string>();
  readonly #openReasoningMessages = new Set<string>();
  readonly #openCalls = new Set<string>();

  constructor(harness: HarnessName, runId: string, threadId: string) {
    this.#harness = harness;
    this.#runId = runId;
    this.#threadId = threadId;
  }

  /** The chunks to write now for one harness chunk (none for a held-back terminal). */
  push(chunk: WireChunk): WireChunk[] {
    const out: WireChunk[] = [];
    for (const wire of toWireShape(chunk)) {
      if (wire.type === 'RUN_FINISHED' || wire.type === 'RUN_ERROR') {
        if (this.#terminal?.type !== 'RUN_ERROR') this.#terminal = wire;
        continue;
      }
      if (wire.type === 'RUN_STARTED') {
        if (!this.#started) out.push(this.#runStarted(wire));
        continue;
      }
      if (!this.#started) out.push(this.#runStarted({ type: 'RUN_STARTED', timestamp: Date.now() }));
      this.#track(wire);
      out.push(wire);
    }
    return out;
  }

  /** The run's last chunks: what is still open, closed, then its one terminal chunk. */
  finish(failure?: { message: string }): WireChunk[] {
    const out: WireChunk[] = [];
    if (!this.#started) out.push(this.#runStarted({ type: 'RUN_STARTED', timestamp: Date.now() }));
    const timestamp = Date.now();
    for (const toolCallId of this.#openCalls) out.push({ type: 'TOOL_CALL_END', toolCallId, timestamp });
    for (const messageId of this.#openText) out.push({ type: 'TEXT_MESSAGE_END', messageId, timestamp });
    for (const messageId of this.#openReasoningMessages) out.push({ type: 'REASONING_MESSAGE_END', messageId, timestamp });
    for (const messageId of this.#openReasoning) out.push({ type: 'REASONING_END', messageId, timestamp });
    for (const open of [this.#openCalls, this.#openText, this.#openReasoningMessages, this.#openReasoning]) open.clear();
    if (failure !== undefined && this.#terminal?.type !== 'RUN_ERROR') this.#terminal = { type: 'RUN_ERROR', message: failure.message, code: 'harness_failed', timestamp };
    const terminal = this.#terminal ?? { type: 'RUN_ERROR', message: `The ${this.#harness} harness ended without RUN_FINISHED or RUN_ERROR.`, code: 'harness_failed', timestamp };
    out.push(terminal.type === 'RUN_FINISHED' ? { ...terminal, runId: this.#runId, threadId: this.#threadId } : { ...terminal, ...classifyRunError(this.#harness, terminal) });
    return out;
  }

  #runStarted(chunk: WireChunk): WireChunk {
    this.#started = true;
    return { ...chunk, runId: this.#runId, threadId: this.#threadId };
  }

  #track(chunk: WireChunk): void {
    const messageId = typeof chunk.messageId === 'string' ? chunk.messageId : undefined;
    const toolCallId = typeof chunk.toolCallId === 'string' ? chunk.toolCallId : undefined;
    if (chunk.type === 'TEXT_MESSAGE_START' && messageId !== undefined) this.#openText.add(messageId);
    else if (chunk.type === 'TEXT_MESSAGE_END' && messageId !== undefined) this.#openText.delete(messageId);
    else if (chunk.type === 'REASONING_START' && messageId !== undefined) this.#openReasoning.add(messageId);
    else if (chunk.type === 'REASONING_END' && messageId !== undefined) this.#openReasoning.delete(messageId);
    else if (chunk.type === 'REASONING_MESSAGE_START' && messageId !== undefined) this.#openReasoningMessages.add(messageId);
    else if (chunk.type === 'REASONING_MESSAGE_END' && messageId !== undefined) this.#openReasoningMessages.delete(messageId);
    else if (chunk.type === 'TOOL_CALL_START' && toolCallId !== undefined) this.#openCalls.add(toolCallId);
    else if (chunk.type === 'TOOL_CALL_END' && toolCallId !== undefined) this.#openCalls.delete(toolCallId);
  }
}
