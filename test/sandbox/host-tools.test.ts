import { describe, expect, it } from 'vitest';
import type { RunView } from '../../src/protocol/index.ts';
import { api, createRun, eventsText, eventually, settled } from './helpers.ts';

/**
 * A host tool call's outcome reaching the harness on the deployed path: the
 * run object posts it through the Sandbox object's containerFetch to the
 * runner in the container (the transport's `toolResult`), with no public URL.
 * A client tool is used because its answer comes from the test: the webhook
 * side of the object is the same on both transports.
 */
describe('host tools on the container transport', () => {
  it('delivers a client tool call answer to the harness in the container, and the run completes with it', async () => {
    const tools = [{ name: 'ask', inputSchema: { type: 'object' }, execute: { type: 'client' } }];
    const created = await createRun({ prompt: 'ask in the container', tools, harnessOptions: { chunks: 2, delayMs: 0, toolCalls: [{ name: 'ask', input: { q: 'deployed?' } }] } });
    expect(created.res.status).toBe(202);
    const { runId } = created.json;
    const waiting = await eventually('the call waits for its answer', async () => {
      const record = (await (await api(`/runs/${runId}`)).json()) as RunView;
      return record.pendingToolCalls?.[0] ?? null;
    });
    expect(waiting).toMatchObject({ name: 'ask', input: { q: 'deployed?' } });
    const answered = await api(`/runs/${runId}/tool-results`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ toolCallId: waiting.toolCallId, output: { answer: 'through containerFetch' } }),
    });
    expect(answered.status).toBe(200);
    expect((await settled(runId)).status).toBe('completed');
    const results = (await eventsText(runId))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => (JSON.parse(line) as { chunk?: { type: string; toolCallId?: string; content?: string } }).chunk)
      .filter((chunk) => chunk?.type === 'TOOL_CALL_RESULT' && chunk.toolCallId === waiting.toolCallId);
    expect(results.map((chunk) => JSON.parse(chunk!.content!))).toEqual([{ answer: 'through containerFetch' }]);
  });
});
