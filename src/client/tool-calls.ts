import { hostToolCallOf, isObject, parseRunView, type PendingToolCall, type RunView, type ToolOutcome } from '../protocol/index.ts';
import { runUrl, type RunAddress } from './run-record.ts';

/**
 * The client tool calls of a run still waiting for a person, as a tail sees
 * them: a call is asked for by its `tool-input-available` chunk (marked
 * `client`) and settled by its `TOOL_CALL_RESULT`, whoever answered it and
 * from whichever tab. Seeded from the record's `pendingToolCalls` so a tail
 * that starts late still knows the calls asked before its `fromSeq`.
 */
export class PendingToolCalls {
  readonly #calls = new Map<string, PendingToolCall>();
  readonly #settled = new Set<string>();

  list(): PendingToolCall[] {
    return [...this.#calls.values()];
  }

  /** Whether the list changed. */
  seed(record: RunView): boolean {
    let changed = false;
    for (const call of record.pendingToolCalls ?? []) {
      if (this.#calls.has(call.toolCallId) || this.#settled.has(call.toolCallId)) continue;
      this.#calls.set(call.toolCallId, call);
      changed = true;
    }
    return changed;
  }

  /** Whether the list changed. */
  apply(chunk: unknown): boolean {
    const asked = hostToolCallOf(chunk);
    if (asked !== null) {
      if (asked.client !== true || this.#calls.has(asked.toolCallId) || this.#settled.has(asked.toolCallId)) return false;
      const timestamp = isObject(chunk) && typeof chunk.timestamp === 'number' ? chunk.timestamp : Date.now();
      this.#calls.set(asked.toolCallId, { toolCallId: asked.toolCallId, name: asked.toolName, input: isObject(asked.input) ? asked.input : {}, requestedAt: timestamp });
      return true;
    }
    if (!isObject(chunk) || chunk.type !== 'TOOL_CALL_RESULT' || typeof chunk.toolCallId !== 'string') return false;
    this.#settled.add(chunk.toolCallId);
    return this.#calls.delete(chunk.toolCallId);
  }
}

/** The relay did not take an answer: `already_answered` (another tab was first), `tool_call_not_found`, `run_finished`, `forbidden`, … */
export class ToolAnswerError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ToolAnswerError';
    this.status = status;
    this.code = code;
  }
}

/**
 * `POST /runs/:runId/tool-results`: answers one client tool call with
 * `{output}` or `{error}`. Resolves with the run record; throws a
 * `ToolAnswerError` carrying the relay's code when the answer was not taken.
 */
export async function answerToolCall(fetchImpl: typeof fetch, address: RunAddress, toolCallId: string, outcome: ToolOutcome): Promise<RunView> {
  const res = await fetchImpl(runUrl(address, '/tool-results'), {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ toolCallId, ...outcome }),
  });
  const body: unknown = await res.json().catch(() => null);
  if (res.ok) return parseRunView(body);
  const error = isObject(body) && isObject(body.error) ? body.error : {};
  throw new ToolAnswerError(res.status, typeof error.code === 'string' ? error.code : 'unknown', typeof error.message === 'string' ? error.message : `The relay answered ${res.status}.`);
}
