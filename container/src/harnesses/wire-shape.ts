import type { WireChunk } from '../chunk-writer.ts';

/**
 * One chunk from a 0.42-era adapter in the shape `@tanstack/ai` 0.58's
 * `chat()` puts on the wire: a port of 0.58's `normalizeStreamChunk`
 * (utilities/normalize-stream-chunk.ts), because the runner's adapters pin
 * `@tanstack/ai` ^0.42 and cannot load 0.58. `test/unit/wire-shape.test.ts`
 * runs both on the same chunks so the port cannot drift from the original.
 *
 * - Only AG-UI's own keys stay at the top level; TanStack's extras (`model`,
 *   `finishReason`, `toolName`, `input`, …) move to `metadata.tanstack`.
 * - `TEXT_MESSAGE_CONTENT` and `TOOL_CALL_ARGS` keep their `delta` only: the
 *   accumulated `content`/`args` 0.42 repeats on every chunk is dropped, which
 *   is what keeps a long answer's stored size linear.
 * - `usage` becomes AG-UI 1.0's array of token-usage entries.
 */

const SHARED = ['type', 'timestamp', 'rawEvent', 'metadata'] as const;
const keys = (...fields: string[]): ReadonlySet<string> => new Set([...SHARED, ...fields]);

/** 0.58's `SPEC_KEYS` (utilities/spec-event-keys.ts), for the events a harness emits. */
const SPEC_KEYS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['TEXT_MESSAGE_START', keys('messageId', 'role', 'name')],
  ['TEXT_MESSAGE_CONTENT', keys('messageId', 'delta')],
  ['TEXT_MESSAGE_END', keys('messageId')],
  ['TOOL_CALL_START', keys('toolCallId', 'toolCallName', 'parentMessageId')],
  ['TOOL_CALL_ARGS', keys('toolCallId', 'delta')],
  ['TOOL_CALL_END', keys('toolCallId')],
  ['TOOL_CALL_RESULT', keys('messageId', 'toolCallId', 'content', 'role')],
  ['STATE_SNAPSHOT', keys('snapshot')],
  ['STATE_DELTA', keys('delta')],
  ['MESSAGES_SNAPSHOT', keys('messages')],
  ['RAW', keys('event', 'source')],
  ['CUSTOM', keys('name', 'value')],
  ['RUN_STARTED', keys('threadId', 'runId', 'parentRunId', 'input')],
  ['RUN_FINISHED', keys('threadId', 'runId', 'result', 'outcome', 'usage')],
  ['RUN_ERROR', keys('message', 'code', 'usage')],
  ['STEP_STARTED', keys('stepName')],
  ['STEP_FINISHED', keys('stepName')],
  ['REASONING_START', keys('messageId')],
  ['REASONING_MESSAGE_START', keys('messageId', 'role')],
  ['REASONING_MESSAGE_CONTENT', keys('messageId', 'delta')],
  ['REASONING_MESSAGE_END', keys('messageId')],
  ['REASONING_END', keys('messageId')],
]);
const SHARED_KEYS = keys();

type Fields = Record<string, unknown>;

function isRecord(value: unknown): value is Fields {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** TanStack's `TokenUsage` object (`promptTokens`, …) as AG-UI 1.0's `usage[]`; 0.58's `toSpecTokenUsage`. */
export function toSpecUsage(usage: Fields, model: string | undefined): { usage: Fields[]; leftover: Fields | undefined } {
  const { promptTokens, completionTokens, totalTokens, promptTokensDetails, completionTokensDetails, ...rest } = usage;
  const spec: Fields = { ...(model !== undefined ? { model } : {}), inputTokens: promptTokens, outputTokens: completionTokens, totalTokens };
  const prompt = isRecord(promptTokensDetails) ? promptTokensDetails : undefined;
  const completion = isRecord(completionTokensDetails) ? completionTokensDetails : undefined;
  if (prompt?.cachedTokens !== undefined) spec.cachedInputTokens = prompt.cachedTokens;
  if (completion?.reasoningTokens !== undefined) spec.reasoningTokens = completion.reasoningTokens;
  const without = (details: Fields | undefined, key: string) => {
    if (details === undefined) return undefined;
    const { [key]: _dropped, ...others } = details;
    return Object.keys(others).length > 0 ? others : undefined;
  };
  const leftoverPrompt = without(prompt, 'cachedTokens');
  const leftoverCompletion = without(completion, 'reasoningTokens');
  const leftover: Fields = {
    ...rest,
    ...(leftoverPrompt !== undefined ? { promptTokensDetails: leftoverPrompt } : {}),
    ...(leftoverCompletion !== undefined ? { completionTokensDetails: leftoverCompletion } : {}),
  };
  return { usage: [spec], leftover: Object.keys(leftover).length > 0 ? leftover : undefined };
}

function withTanstack(chunk: Fields, tanstack: Fields): Fields {
  const metadata = isRecord(chunk.metadata) ? chunk.metadata : {};
  const current = isRecord(metadata.tanstack) ? metadata.tanstack : {};
  return { ...chunk, metadata: { ...metadata, tanstack: { ...current, ...tanstack } } };
}

/**
 * `chunk` in 0.58's wire shape, followed by the `TOOL_CALL_RESULT` 0.58 fans
 * out of a `TOOL_CALL_END` that carries its `result`.
 */
export function toWireShape(chunk: WireChunk): WireChunk[] {
  const type = chunk.type;
  const specKeys = SPEC_KEYS.get(type) ?? SHARED_KEYS;
  const spec: Fields = { type };
  for (const key of Object.keys(chunk)) if (specKeys.has(key)) spec[key] = chunk[key];

  if (type === 'TOOL_CALL_START' && spec.toolCallName === undefined && nonEmpty(chunk.toolName)) spec.toolCallName = chunk.toolName;
  if (type === 'RUN_ERROR' && isRecord(chunk.error)) {
    if (spec.message === undefined && nonEmpty(chunk.error.message)) spec.message = chunk.error.message;
    if (spec.code === undefined && chunk.error.code !== undefined) spec.code = chunk.error.code;
  }

  const deltaOnly = type === 'TEXT_MESSAGE_CONTENT' || type === 'TOOL_CALL_ARGS';
  const tanstack: Fields = {};
  if (chunk.model !== undefined && !deltaOnly) tanstack.model = chunk.model;
  if (chunk.finishReason !== undefined) tanstack.finishReason = chunk.finishReason;
  if (chunk['tanstack:interruptErrors'] !== undefined) tanstack.interruptErrors = chunk['tanstack:interruptErrors'];
  if (type === 'CUSTOM' || type === 'RUN_ERROR') {
    if (chunk.threadId !== undefined) tanstack.threadId = chunk.threadId;
    if (chunk.runId !== undefined) tanstack.runId = chunk.runId;
  }
  const skip = new Set(['result', 'error', 'tanstack:interruptErrors']);
  if (deltaOnly) for (const key of ['model', 'content', 'args']) skip.add(key);
  if (type === 'TOOL_CALL_START') skip.add('toolName');
  for (const key of Object.keys(chunk)) {
    if (specKeys.has(key) || skip.has(key) || tanstack[key] !== undefined) continue;
    if (chunk[key] !== undefined) tanstack[key] = chunk[key];
  }

  if ((type === 'RUN_FINISHED' || type === 'RUN_ERROR') && isRecord(spec.usage) && 'promptTokens' in spec.usage) {
    const { usage, leftover } = toSpecUsage(spec.usage, typeof chunk.model === 'string' ? chunk.model : undefined);
    spec.usage = usage;
    if (leftover !== undefined) tanstack.usage = leftover;
  }

  const main = (Object.keys(tanstack).length === 0 ? spec : withTanstack(spec, tanstack)) as WireChunk;
  if (type !== 'TOOL_CALL_END' || chunk.result === undefined) return [main];
  const parent = nonEmpty(chunk.parentMessageId);
  const result: WireChunk = {
    type: 'TOOL_CALL_RESULT',
    toolCallId: chunk.toolCallId,
    content: Array.isArray(chunk.result) ? JSON.stringify(chunk.result) : chunk.result,
    messageId: parent ?? chunk.toolCallId,
  };
  return [main, chunk.state === 'output-error' ? { ...result, metadata: { tanstack: { state: chunk.state } } } : result];
}
