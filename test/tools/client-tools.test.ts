import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { isEventFrame, type RunView, type SocketFrame } from '../../src/protocol/index.ts';
import { api, createRun, openTail, tailOf } from '../workers/helpers.ts';
import { chunksOf, record, resultsOf, settled, until, type Chunk } from './helpers.ts';

/**
 * Client tools (SPEC "Interactive runs") end to end in workerd, with the demo
 * harness in the real runner calling one (`harnessOptions.toolCalls`) and the
 * tests answering as a person's tabs would. CLIENT_TOOL_TIMEOUT_SECONDS is 8 here.
 */

const ASK = { name: 'ask', description: 'Asks the person a question', inputSchema: { type: 'object', properties: { question: { type: 'string' } } }, execute: { type: 'client' } };




const waiting = (runId: string) => until(() => record(runId), (r) => (r.pendingToolCalls?.length ?? 0) > 0 || r.status !== 'running');



function answer(runId: string, body: unknown, headers: Record<string, string> = {}) {
  return api(`/runs/${runId}/tool-results`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

async function startAsking(question = 'Ship it?') {
  const { res, json } = await createRun({ prompt: 'ask me', tools: [ASK], harnessOptions: { chunks: 2, delayMs: 0, toolCalls: [{ name: 'ask', input: { question } }] } });
  expect(res.status, JSON.stringify(json)).toBe(202);
  return json as unknown as RunView & { attachToken: string };
}

describe.concurrent('client tools', () => {
  it('pauses the call, not the run; one tab answers over HTTP, a second tab over the WebSocket gets 409 already_answered', async () => {
    const { runId } = await startAsking();
    const paused = await waiting(runId);
    expect(paused.status).toBe('running');
    expect(paused.pendingToolCalls).toEqual([{ toolCallId: expect.any(String), name: 'ask', input: { question: 'Ship it?' }, requestedAt: expect.any(Number) }]);
    const toolCallId = paused.pendingToolCalls![0]!.toolCallId;

    // A reload (a fresh tail from the start) replays the call's chunks.
    const second = await openTail(runId);
    await second.until((frames) => frames.some((frame) => isEventFrame(frame) && frame.chunk.type === 'CUSTOM'));
    const replayed = second.frames.filter(isEventFrame).map((frame) => frame.chunk as unknown as Chunk);
    expect(replayed.filter((chunk) => chunk.toolCallId === toolCallId).map((chunk) => chunk.type)).toContain('TOOL_CALL_START');

    const first = await answer(runId, { toolCallId, output: { answer: 'yes, ship it' } });
    expect(first.status).toBe(200);
    expect(((await first.json()) as RunView).pendingToolCalls).toBeUndefined();

    second.ws.send(JSON.stringify({ type: 'tool_result', toolCallId, output: { answer: 'no' } }));
    const frames = await second.until((all) => all.some((frame) => 'type' in frame && frame.type === 'tool_result_answer'));
    expect(frames.find((frame): frame is Extract<SocketFrame, { type: 'tool_result_answer' }> => 'type' in frame && frame.type === 'tool_result_answer')).toMatchObject({
      toolCallId,
      status: 409,
      error: { code: 'already_answered' },
    });
    expect((await answer(runId, { toolCallId, output: 'late' })).status).toBe(409);

    const done = await settled(runId);
    expect(done.status).toBe('completed');
    const chunks = await chunksOf(runId);
    expect(resultsOf(chunks, toolCallId)).toEqual([{ answer: 'yes, ship it' }]);
    const { messages } = (await (await api(`/threads/${runId}/messages`)).json()) as { messages: { role: string; toolCallId?: string; content?: unknown }[] };
    expect(messages.find((message) => message.role === 'tool' && message.toolCallId === toolCallId)).toMatchObject({ content: JSON.stringify({ answer: 'yes, ship it' }) });
    second.ws.close();
  });

  it('takes an answer over the WebSocket, and refuses unknown calls (404) and finished runs (409 run_finished)', async () => {
    const { runId } = await startAsking('Over the socket?');
    const toolCallId = (await waiting(runId)).pendingToolCalls![0]!.toolCallId;
    expect((await answer(runId, { toolCallId: 'no-such-call', output: 1 })).status).toBe(404);
    const tail = await openTail(runId);
    tail.ws.send(JSON.stringify({ type: 'tool_result', toolCallId, error: 'the person said no' }));
    await tail.until((frames) => frames.some((frame) => 'type' in frame && frame.type === 'tool_result_answer'));
    expect(tail.frames.find((frame) => 'type' in frame && frame.type === 'tool_result_answer')).toMatchObject({ status: 200 });
    expect((await settled(runId)).status).toBe('completed');
    expect(resultsOf(await chunksOf(runId), toolCallId)).toEqual([{ error: 'the person said no' }]);
    const late = await answer(runId, { toolCallId, output: 1 });
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ error: { code: 'run_finished' } });
  });

  it("lets the POST /runs attach token answer, a minted one only when asked for with {respond: true}, and no token another run's call", async () => {
    const mine = await startAsking('Who may answer?');
    const other = await startAsking('Not you');
    const toolCallId = (await waiting(mine.runId)).pendingToolCalls![0]!.toolCallId;
    const otherCallId = (await waiting(other.runId)).pendingToolCalls![0]!.toolCallId;

    const mint = async (body?: unknown) => {
      const init: RequestInit = { method: 'POST', ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) };
      return ((await (await api(`/runs/${mine.runId}/attach-token`, init)).json()) as { attachToken: string }).attachToken;
    };
    const readOnly = await mint();
    const forbidden = await api(`/runs/${mine.runId}/tool-results?token=${readOnly}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ toolCallId, output: 1 }) });
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ error: { code: 'forbidden' } });
    // A read-only socket's answer is refused too.
    const socket = tailOf(await api(`/runs/${mine.runId}/ws?token=${readOnly}`, { headers: { upgrade: 'websocket' } }));
    socket.ws.send(JSON.stringify({ type: 'tool_result', toolCallId, output: 1 }));
    await socket.until((frames) => frames.some((frame) => 'type' in frame && frame.type === 'tool_result_answer'));
    expect(socket.frames.find((frame) => 'type' in frame && frame.type === 'tool_result_answer')).toMatchObject({ status: 403 });
    socket.ws.close();

    // The creator's token reaches only its own run: another run's call is a 404, as for an unknown run.
    const elsewhere = await api(`/runs/${other.runId}/tool-results?token=${mine.attachToken}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ toolCallId: otherCallId, output: 1 }) });
    expect(elsewhere.status).toBe(404);

    const responder = await mint({ respond: true });
    const ok = await api(`/runs/${mine.runId}/tool-results?token=${responder}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ toolCallId, output: 'minted' }) });
    expect(ok.status).toBe(200);
    const created = await api(`/runs/${other.runId}/tool-results?token=${other.attachToken}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ toolCallId: otherCallId, output: 'creator' }) });
    expect(created.status).toBe(200);
    expect((await settled(mine.runId)).status).toBe('completed');
    expect((await settled(other.runId)).status).toBe('completed');
  });

  it('gives the harness a timeout error when nobody answers in CLIENT_TOOL_TIMEOUT_SECONDS, and the run goes on', async () => {
    const { runId } = await startAsking('Anyone there?');
    const toolCallId = (await waiting(runId)).pendingToolCalls![0]!.toolCallId;
    const done = await settled(runId);
    expect(done.status).toBe('completed');
    expect(resultsOf(await chunksOf(runId), toolCallId)).toEqual([{ error: expect.stringMatching(/^timeout: .*CLIENT_TOOL_TIMEOUT_SECONDS/) }]);
  });
});

describe('an eviction between an answer and its delivery', () => {
  it('delivers the stored answer after the restart, and the harness gets it exactly once', async () => {
    const { runId } = await startAsking('Survive this?');
    const toolCallId = (await waiting(runId)).pendingToolCalls![0]!.toolCallId;
    // The runner will not get this run's tool results for now: the object stores the answer, then hangs delivering it.
    await fetch(`http://tools-control.test/hold?runId=${runId}`);
    expect((await answer(runId, { toolCallId, output: { survived: true } })).status).toBe(200);
    await abortAllDurableObjects();
    await fetch(`http://tools-control.test/release?runId=${runId}`);
    // The answer was durable: a new instance has no pending call, and delivers what it stored.
    const after = await record(runId);
    expect(after.pendingToolCalls).toBeUndefined();
    expect((await settled(runId)).status).toBe('completed');
    const chunks = await chunksOf(runId);
    expect(resultsOf(chunks, toolCallId)).toEqual([{ survived: true }]);
  });
});
