import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../scripts/local-stack.ts';
import { postRun, startStack, waitSettled } from './stack.ts';

/**
 * The runner's port as anything else on the machine sees it (`npm start`'s
 * stack): without the token of this start it starts, reads and cancels
 * nothing, while the relay's own runs go on.
 */
let stack: LocalStack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.close();
});

async function toRunner(path: string, init: RequestInit = {}): Promise<{ status: number; body: { error?: { code: string } } }> {
  const res = await fetch(`${stack.runnerUrl}${path}`, init);
  return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
}

const withToken = () => ({ authorization: `Bearer ${stack.runnerToken}` });
const UNAUTHORIZED = [
  ['no token', {}],
  ['a wrong token', { authorization: 'Bearer 0000000000000000000000000000000000000000000000000000000000000000' }],
] as const;

describe('the runner port without the runner token', () => {
  it.each(UNAUTHORIZED)('with %s, POST /run answers 401 and starts no harness', async (_label, headers) => {
    const runId = `run_intruder_${Math.random().toString(36).slice(2)}`;
    const body = JSON.stringify({ runId, threadId: runId, tenant: null, harness: 'demo', messages: [{ role: 'user', content: 'hi' }] });
    const answer = await toRunner('/run', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
    expect(answer).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    // Asked with the token, the runner has never heard of that run.
    expect((await toRunner(`/runs/${runId}`, { headers: withToken() })).status).toBe(404);
  });

  it.each(UNAUTHORIZED)('with %s, a real running run can be neither read nor cancelled, and it completes', async (_label, headers) => {
    const run = await postRun(stack.url, { prompt: 'keep going', harnessOptions: { chunks: 150, delayMs: 10 } });
    // The relay's own runner request has started it: the runner knows the run.
    expect((await toRunner(`/runs/${run.runId}`, { headers: withToken() })).body).toMatchObject({ state: 'running' });

    const read = await toRunner(`/runs/${run.runId}/stream?fromSeq=-1`, { headers });
    expect(read).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });
    expect((await toRunner(`/runs/${run.runId}`, { headers })).status).toBe(401);
    const cancel = await toRunner(`/runs/${run.runId}/cancel`, { method: 'POST', headers });
    expect(cancel).toMatchObject({ status: 401, body: { error: { code: 'unauthorized' } } });

    expect(await waitSettled(stack.url, run.runId)).toMatchObject({ status: 'completed' });
  });

  it('refuses a browser (an Origin header) even with the token, and a body that is not JSON', async () => {
    const origin = await toRunner('/runs/x', { headers: { ...withToken(), origin: stack.url } });
    expect(origin).toMatchObject({ status: 403, body: { error: { code: 'forbidden_origin' } } });
    const plain = await toRunner('/run', { method: 'POST', headers: { ...withToken(), 'content-type': 'text/plain' }, body: '{}' });
    expect(plain).toMatchObject({ status: 415, body: { error: { code: 'unsupported_media_type' } } });
  });

  it('answers /health without the token, showing no secret and no run', async () => {
    const run = await postRun(stack.url, { prompt: 'hello', harnessOptions: { chunks: 2, delayMs: 0 } });
    await waitSettled(stack.url, run.runId);
    const res = await fetch(`${stack.runnerUrl}/health`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(stack.runnerToken);
    expect(text).not.toContain(run.runId);
  });

  it('keeps the token off every command line (what `ps` shows any local user)', () => {
    const leaking: string[] = [];
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(stack.runnerToken)) leaking.push(entry);
      } catch {
        // Exited while listing.
      }
    }
    expect(leaking).toEqual([]);
  });
});
