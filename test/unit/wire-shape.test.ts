import { normalizeStreamChunk, type StreamChunk } from '@tanstack/ai';
import { describe, expect, it } from 'vitest';
import { toWireShape } from '../../container/src/harnesses/wire-shape.ts';

/**
 * The runner's port of 0.58's `normalizeStreamChunk` (the runner's adapters pin
 * @tanstack/ai 0.42 and cannot load 0.58) against the original, on chunks as
 * the 0.42-era adapters write them.
 */
const CHUNKS: Record<string, unknown>[] = [
  { type: 'RUN_STARTED', runId: 'r', threadId: 't', model: 'sonnet', timestamp: 1 },
  { type: 'TEXT_MESSAGE_START', messageId: 'm', role: 'assistant', model: 'sonnet', timestamp: 2 },
  { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'lo', content: 'hello', model: 'sonnet', timestamp: 3 },
  { type: 'TEXT_MESSAGE_END', messageId: 'm', model: 'sonnet', timestamp: 4 },
  { type: 'TOOL_CALL_START', toolCallId: 'c', toolCallName: 'Bash', toolName: 'Bash', parentMessageId: 'm', index: 0, model: 'sonnet', timestamp: 5 },
  { type: 'TOOL_CALL_START', toolCallId: 'c2', toolName: 'Read', model: 'sonnet', timestamp: 5 },
  { type: 'TOOL_CALL_ARGS', toolCallId: 'c', delta: '"ls"}', args: '{"command":"ls"}', model: 'sonnet', timestamp: 6 },
  { type: 'TOOL_CALL_END', toolCallId: 'c', toolCallName: 'Bash', toolName: 'Bash', input: { command: 'ls' }, model: 'sonnet', timestamp: 7 },
  { type: 'TOOL_CALL_END', toolCallId: 'c3', input: {}, result: 'done', state: 'output-error', parentMessageId: 'm', timestamp: 7 },
  { type: 'TOOL_CALL_RESULT', toolCallId: 'c', messageId: 'x', content: 'README.md\n', state: 'output-error', model: 'sonnet', timestamp: 8 },
  { type: 'CUSTOM', name: 'claude-code.session-id', value: { sessionId: 's' }, model: 'sonnet', runId: 'r', threadId: 't', timestamp: 9 },
  {
    type: 'RUN_FINISHED',
    runId: 'r',
    threadId: 't',
    model: 'sonnet',
    finishReason: 'stop',
    usage: { promptTokens: 12, completionTokens: 34, totalTokens: 46, promptTokensDetails: { cachedTokens: 8, cacheWriteTokens: 2 }, providerUsageDetails: { totalCostUsd: 0.01 } },
    timestamp: 10,
  },
  { type: 'RUN_ERROR', model: 'claude-sonnet-4-6', message: '401 {}', code: '401', rawEvent: { type: 'error' }, error: { message: '401 {}', code: '401' }, timestamp: 11 },
  { type: 'RUN_ERROR', error: { message: 'only nested', code: 'x' }, timestamp: 12 },
  { type: 'REASONING_MESSAGE_CONTENT', messageId: 'r1', delta: 'hm', model: 'sonnet', timestamp: 13 },
];

describe("toWireShape: the runner's copy of @tanstack/ai 0.58's normalizeStreamChunk", () => {
  it.each(CHUNKS.map((chunk) => [`${String(chunk.type)} ${JSON.stringify(chunk).slice(0, 60)}`, chunk]))('%s', (_name, chunk) => {
    const input = chunk as { type: string } & Record<string, unknown>;
    expect(toWireShape(input)).toEqual(normalizeStreamChunk(input as unknown as StreamChunk));
  });
});
