import { abortAllDurableObjects } from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import type { WebhookRequest } from '../support/webhook-double.ts';
import { TOOLS_WEBHOOK_SECRET } from '../support/tools-outbound.ts';
import { api, createRun } from '../workers/helpers.ts';
import { chunksOf, resultsOf, settled, type Chunk } from './helpers.ts';

/**
 * Webhook tools end to end in workerd, with the demo harness in the real
 * runner calling them (`harnessOptions.toolCalls`) and an app's endpoints on
 * loopback (test/support/webhook-double.ts). TOOL_TIMEOUT_SECONDS is 2 here.
 */

const hooks = inject('webhookUrl');
const objectSchema = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });

function webhookTool(name: string, behaviour: string, inputSchema: Record<string, unknown> = { type: 'object' }) {
  return { name, description: `the ${behaviour} hook`, inputSchema, execute: { type: 'webhook', url: `${hooks}/hooks/${behaviour}` } };
}




async function callsFor(runId: string): Promise<WebhookRequest[]> {
  const all = (await (await fetch(`${hooks}/_calls`)).json()) as WebhookRequest[];
  return all.filter((call) => (JSON.parse(call.body) as { runId: string }).runId === runId);
}

async function hmacHex(secret: string, message: string): Promise<string> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(message));
  return [...new Uint8Array(mac)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}


/** The demo's host calls, in the order it made them: the ids its TOOL_CALL_STARTs carry for the run's tools. */
function hostCallIds(chunks: Chunk[], names: string[]): string[] {
  return chunks.filter((chunk) => chunk.type === 'TOOL_CALL_START' && names.includes(String(chunk.toolCallName))).map((chunk) => String(chunk.toolCallId));
}

async function startDemo(tools: unknown[], toolCalls: { name: string; input: Record<string, unknown> }[], extra: Record<string, unknown> = {}) {
  const { res, json } = await createRun({ prompt: 'use the tools', tools, harnessOptions: { chunks: 3, delayMs: 0, toolCalls }, ...extra });
  expect(res.status, JSON.stringify(json)).toBe(202);
  return json.runId;
}

describe.concurrent('webhook tools', () => {
  it('runs two webhook tools: one signed request per call, every TOOL_CALL_* frame, the outputs as results', async () => {
    const runId = await startDemo(
      [webhookTool('echo', 'echo', objectSchema({ text: { type: 'string' } }, ['text'])), webhookTool('add', 'add', objectSchema({ a: { type: 'number' }, b: { type: 'number' } }))],
      [
        { name: 'echo', input: { text: 'hello hooks' } },
        { name: 'add', input: { a: 2, b: 40 } },
      ],
    );
    const record = await settled(runId);
    expect(record.status).toBe('completed');
    const chunks = await chunksOf(runId);
    const [echoId, addId] = hostCallIds(chunks, ['echo', 'add']);
    expect(echoId).toBeDefined();
    expect(addId).toBeDefined();
    for (const id of [echoId!, addId!]) {
      const types = chunks.filter((chunk) => chunk.toolCallId === id || (chunk.type === 'CUSTOM' && (chunk.value as { toolCallId?: string })?.toolCallId === id)).map((chunk) => chunk.type);
      // However many ARGS deltas the arguments took, in this order.
      expect(types.filter((type, i) => type !== types[i - 1])).toEqual(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'CUSTOM', 'TOOL_CALL_RESULT']);
    }
    expect(resultsOf(chunks, echoId!)).toEqual([{ echo: { text: 'hello hooks' } }]);
    expect(resultsOf(chunks, addId!)).toEqual([{ sum: 42 }]);

    const calls = await callsFor(runId);
    expect(calls.map((call) => call.path)).toEqual(['/hooks/echo', '/hooks/add']);
    for (const [call, id, name] of [
      [calls[0]!, echoId!, 'echo'],
      [calls[1]!, addId!, 'add'],
    ] as const) {
      expect(call.idempotencyKey).toBe(id);
      expect(call.contentType).toBe('application/json');
      expect(JSON.parse(call.body)).toMatchObject({ runId, threadId: runId, toolCallId: id, name });
      const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(call.signature ?? '');
      expect(match, call.signature ?? 'no signature').not.toBeNull();
      expect(match![2]).toBe(await hmacHex(TOOLS_WEBHOOK_SECRET, `${match![1]}.${call.body}`));
      expect(Math.abs(Number(match![1]) - Date.now() / 1000)).toBeLessThan(600);
    }
  });

  it('retries a webhook that answers 500 twice, with the same Idempotency-Key, and takes the third answer', async () => {
    const runId = await startDemo([webhookTool('flaky', 'flaky')], [{ name: 'flaky', input: {} }]);
    expect((await settled(runId)).status).toBe('completed');
    const chunks = await chunksOf(runId);
    const [id] = hostCallIds(chunks, ['flaky']);
    const calls = await callsFor(runId);
    expect(calls.map((call) => call.idempotencyKey)).toEqual([id, id, id]);
    expect(resultsOf(chunks, id!)).toEqual([{ attempt: 3 }]);
  });

  it('gives the harness an error result for a webhook that times out, and the run goes on to complete', async () => {
    const runId = await startDemo([webhookTool('slow', 'slow'), webhookTool('echo', 'echo')], [
      { name: 'slow', input: {} },
      { name: 'echo', input: { after: 'timeout' } },
    ]);
    expect((await settled(runId)).status).toBe('completed');
    const chunks = await chunksOf(runId);
    const [slowId, echoId] = hostCallIds(chunks, ['slow', 'echo']);
    expect(resultsOf(chunks, slowId!)).toEqual([{ error: expect.stringMatching(/^timeout: .*TOOL_TIMEOUT_SECONDS/) }]);
    expect(resultsOf(chunks, echoId!)).toEqual([{ echo: { after: 'timeout' } }]);
  });

  it('checks the input against the schema before calling: a bad input is an error result and no request', async () => {
    const runId = await startDemo([webhookTool('echo', 'echo', objectSchema({ text: { type: 'string' } }, ['text']))], [{ name: 'echo', input: { text: 7 } }]);
    expect((await settled(runId)).status).toBe('completed');
    const chunks = await chunksOf(runId);
    const [id] = hostCallIds(chunks, ['echo']);
    expect(resultsOf(chunks, id!)).toEqual([{ error: expect.stringMatching(/^invalid input for echo: #\/text/) }]);
    expect(await callsFor(runId)).toEqual([]);
  });

  it("passes a tool's own {error} on as the call's result", async () => {
    const runId = await startDemo([webhookTool('fail', 'fail')], [{ name: 'fail', input: {} }]);
    expect((await settled(runId)).status).toBe('completed');
    const chunks = await chunksOf(runId);
    expect(resultsOf(chunks, hostCallIds(chunks, ['fail'])[0]!)).toEqual([{ error: 'the tool failed on purpose' }]);
  });

  it('refuses a webhook origin outside TOOL_WEBHOOK_ORIGINS with 400 tool_not_allowed, and stores nothing', async () => {
    const threadId = `thread-${crypto.randomUUID()}`;
    for (const url of ['https://evil.example/hook', 'http://127.0.0.1:1/hook', 'http://169.254.169.254/latest/meta-data']) {
      const { res, json } = await createRun({ prompt: 'x', threadId, tools: [{ name: 't', inputSchema: { type: 'object' }, execute: { type: 'webhook', url } }] });
      expect(res.status, url).toBe(400);
      expect(json).toMatchObject({ error: { code: 'tool_not_allowed' } });
    }
    expect((await api(`/threads/${threadId}`)).status).toBe(404);
  });

  it('keeps host tool calls in the transcript, not marked sandbox-observed, so the next turn replays them', async () => {
    const runId = await startDemo([webhookTool('add', 'add')], [{ name: 'add', input: { a: 1, b: 1 } }]);
    expect((await settled(runId)).status).toBe('completed');
    const [id] = hostCallIds(await chunksOf(runId), ['add']);
    let messages: { role: string; toolCalls?: { id: string; metadata?: unknown }[]; toolCallId?: string; content?: unknown; metadata?: unknown }[] = [];
    for (let i = 0; i < 200; i++) {
      ({ messages } = (await (await api(`/threads/${runId}/messages`)).json()) as { messages: typeof messages });
      if (messages.some((message) => message.toolCallId === id)) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const call = messages.flatMap((message) => message.toolCalls ?? []).find((candidate) => candidate.id === id);
    expect(call).toBeDefined();
    expect(call!.metadata).toBeUndefined();
    const result = messages.find((message) => message.role === 'tool' && message.toolCallId === id);
    expect(result).toMatchObject({ content: JSON.stringify({ sum: 2 }) });
    expect(result!.metadata).toBeUndefined();
  });
});

describe('a run object restart in the middle of a webhook call', () => {
  it('neither loses the result nor calls the webhook with another key, and the harness gets it once', async () => {
    const runId = await startDemo([webhookTool('held', 'hold-once')], [{ name: 'held', input: { n: 1 } }]);
    // The first request is held open by the endpoint: the call is in flight.
    for (let i = 0; i < 400 && (await callsFor(runId)).length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    expect(await callsFor(runId)).toHaveLength(1);
    await abortAllDurableObjects();
    // Any request wakes the run: the new instance reattaches and resumes the call from storage.
    const record = await settled(runId);
    expect(record.status).toBe('completed');
    const chunks = await chunksOf(runId);
    const [id] = hostCallIds(chunks, ['held']);
    const calls = await callsFor(runId);
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls.map((call) => call.idempotencyKey))).toEqual(new Set([id]));
    expect(resultsOf(chunks, id!)).toEqual([{ attempt: calls.length }]);
    // One request chunk, one result: nothing was asked or answered twice.
    expect(chunks.filter((chunk) => chunk.type === 'CUSTOM' && (chunk.value as { toolCallId?: string }).toolCallId === id)).toHaveLength(1);
  });
});
