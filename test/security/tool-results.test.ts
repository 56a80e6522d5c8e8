import type { StreamChunk } from '@tanstack/ai';
import { describe, expect, it } from 'vitest';
import { HOST_TOOL_CALL_EVENT, type RunView } from '../../src/protocol/index.ts';
import { api, bearer, createRun, expectError, feed, openTail } from './helpers.ts';

/**
 * Who may answer a client tool call (SPEC "Interactive runs"), with auth on,
 * from the attacker's side: the API token and the run's answering attach
 * tokens may; a read-only token, another run's token, another tenant and a
 * stranger may not, and learn nothing about the call.
 */

const ASK = { name: 'ask', inputSchema: { type: 'object' }, execute: { type: 'client' } };

async function pendingRun(tenant?: string) {
  const run = await createRun({ body: { prompt: 'ask', tools: [ASK] }, ...(tenant ? { tenant } : {}) });
  const toolCallId = `call_${crypto.randomUUID().replaceAll('-', '')}`;
  const ask = { type: 'CUSTOM', name: HOST_TOOL_CALL_EVENT, value: { toolCallId, toolName: 'ask', input: { q: 'ok?' } } } as unknown as StreamChunk;
  await feed(tenant ?? null, run.runId, [ask]);
  return { ...run, toolCallId };
}

function answer(runId: string, toolCallId: string, headers: Record<string, string>, query = '') {
  return api(`/runs/${runId}/tool-results${query}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ toolCallId, output: { answer: 'yes' } }) });
}

describe('answering client tool calls', () => {
  it('lists the waiting call on the record', async () => {
    const { runId, toolCallId } = await pendingRun();
    const record = (await (await api(`/runs/${runId}`, { headers: bearer() })).json()) as RunView;
    expect(record.pendingToolCalls).toEqual([{ toolCallId, name: 'ask', input: { q: 'ok?' }, requestedAt: expect.any(Number) }]);
  });

  it('refuses a stranger (401), a read-only attach token (403) and another run\'s token (404), and the call stays open', async () => {
    const { runId, toolCallId } = await pendingRun();
    const other = await createRun();
    await expectError(await answer(runId, toolCallId, {}), 401, 'unauthorized');
    const minted = (await (await api(`/runs/${runId}/attach-token`, { method: 'POST', headers: bearer() })).json()) as { attachToken: string };
    await expectError(await answer(runId, toolCallId, {}, `?token=${minted.attachToken}`), 403, 'forbidden');
    await expectError(await answer(runId, toolCallId, {}, `?token=${other.attachToken}`), 404, 'run_not_found');
    const record = (await (await api(`/runs/${runId}`, { headers: bearer() })).json()) as RunView;
    expect(record.pendingToolCalls?.map((call) => call.toolCallId)).toEqual([toolCallId]);
  });

  it("keeps tenants apart: another tenant's API token gets the unknown-run 404", async () => {
    const { runId, toolCallId } = await pendingRun('tenant-a');
    await expectError(await answer(runId, toolCallId, bearer('tenant-b')), 404, 'run_not_found');
    expect((await answer(runId, toolCallId, bearer('tenant-a'))).status).toBe(200);
  });

  it('takes the API token, the POST /runs attach token and a {respond: true} one; the first answer wins', async () => {
    const first = await pendingRun();
    expect((await answer(first.runId, first.toolCallId, bearer())).status).toBe(200);
    await expectError(await answer(first.runId, first.toolCallId, {}, `?token=${first.attachToken}`), 409, 'already_answered');

    const second = await pendingRun();
    expect((await answer(second.runId, second.toolCallId, {}, `?token=${second.attachToken}`)).status).toBe(200);

    const third = await pendingRun();
    const responder = (await (
      await api(`/runs/${third.runId}/attach-token`, { method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' }, body: JSON.stringify({ respond: true }) })
    ).json()) as { attachToken: string };
    expect((await answer(third.runId, third.toolCallId, {}, `?token=${responder.attachToken}`)).status).toBe(200);
  });

  it('refuses an answer too large to become one chunk, over HTTP (413) and over the socket', async () => {
    const { runId, toolCallId } = await pendingRun();
    const tail = await openTail(`/runs/${runId}/ws`, bearer());
    tail.ws.send(JSON.stringify({ type: 'tool_result', toolCallId, output: 'x'.repeat(600 * 1024) }));
    await tail.until((frames) => frames.some((frame) => 'type' in frame && frame.type === 'tool_result_answer'));
    expect(tail.frames.find((frame) => 'type' in frame && frame.type === 'tool_result_answer')).toMatchObject({ toolCallId, status: 413, error: { code: 'payload_too_large' } });
    tail.ws.close();
    const record = (await (await api(`/runs/${runId}`, { headers: bearer() })).json()) as RunView;
    expect(record.pendingToolCalls?.map((call) => call.toolCallId)).toEqual([toolCallId]);
  });

  it('refuses a malformed answer with 400 and takes nothing', async () => {
    const { runId, toolCallId } = await pendingRun();
    const id = JSON.stringify(toolCallId);
    for (const body of [`{"toolCallId":${id}}`, `{"toolCallId":${id},"output":1,"error":"x"}`, '{"toolCallId":"bad id\\n","output":1}', `{"toolCallId":${id},"output":1,"__proto__":{"x":1}}`]) {
      const res = await api(`/runs/${runId}/tool-results`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer() }, body });
      expect(res.status, body).toBe(400);
    }
    const huge = await api(`/runs/${runId}/tool-results`, { method: 'POST', headers: { 'content-type': 'application/json', ...bearer() }, body: JSON.stringify({ toolCallId, output: 'x'.repeat(600 * 1024) }) });
    await expectError(huge, 413, 'payload_too_large');
    await expectError(await api(`/runs/${runId}/attach-token`, { method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' }, body: JSON.stringify({ respond: 'yes' }) }), 400, 'invalid_body');
    const record = (await (await api(`/runs/${runId}`, { headers: bearer() })).json()) as RunView;
    expect(record.pendingToolCalls?.map((call) => call.toolCallId)).toEqual([toolCallId]);
  });
});
