import { env, listDurableObjectIds } from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import type { RunnerRunRequest, RunnerRunStatus } from '../../src/protocol/index.ts';
import type { RunView } from '../../src/protocol/index.ts';
import { api, createRun, openTail, runStub } from '../workers/helpers.ts';

/**
 * SPEC "Limits" at the small values of this project (vitest.config.ts):
 * RUN_MAX_SECONDS 40, IDLE_TIMEOUT_SECONDS 4 (keep-alives every 100 ms, a
 * stall budget of 1.5 s), RUN_MAX_EVENTS 300, RUN_MAX_BYTES 40,000,
 * MAX_CLIENTS_PER_RUN 3, MAX_THREAD_MESSAGES 6. Each run ends with SPEC's
 * code, and the real runner then reports no live process for it. The
 * tests run concurrently: the two slow ones wait out the run limit.
 */

/** Polls the record until the run is terminal, for at most `ms`. */
async function settled(runId: string, ms = 20_000): Promise<RunView> {
  const deadline = Date.now() + ms;
  for (;;) {
    const current = (await (await api(`/runs/${runId}`)).json()) as RunView;
    if (current.status !== 'running' || Date.now() > deadline) return current;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function runnerStatus(runId: string): Promise<RunnerRunStatus> {
  const res = await fetch(`${inject('runnerUrl')}/runs/${runId}`, { headers: { authorization: `Bearer ${inject('runnerToken')}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as RunnerRunStatus;
}

/** The harness is stopped in the run's own time after the terminal status: poll, bounded. */
async function harnessGone(runId: string): Promise<RunnerRunStatus> {
  let status = await runnerStatus(runId);
  for (let i = 0; i < 500 && status.pid !== null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    status = await runnerStatus(runId);
  }
  expect(status.pid).toBeNull();
  return status;
}

/**
 * A run the API would refuse (its demo options are bounded by the same
 * limits), created on its object as the Worker does: it stands for a real
 * harness, whose output nobody can bound in advance.
 */
async function startUnbounded(harnessOptions: Record<string, number>): Promise<string> {
  const runId = `run_${crypto.randomUUID().replaceAll('-', '')}`;
  const request: RunnerRunRequest = { runId, threadId: runId, tenant: null, harness: 'demo', messages: [{ role: 'user', content: 'go on and on' }], harnessOptions };
  const result = await runStub(runId).create({ runId, threadId: runId, requestHash: 'unbounded', request });
  expect(result.kind).toBe('created');
  return runId;
}

describe.concurrent('per-run limits', () => {
  it('RUN_MAX_EVENTS: the run keeps 300 events, the last its RUN_ERROR max_events_exceeded, and the harness is killed', async () => {
    const runId = await startUnbounded({ chunks: 100_000, delayMs: 0, chunkBytes: 1 });
    const done = await settled(runId);
    expect(done).toMatchObject({ status: 'failed', lastSeq: 299, error: { code: 'max_events_exceeded' } });
    await harnessGone(runId);
  });

  it('RUN_MAX_BYTES: the run fails max_bytes_exceeded, within the limit but for its RUN_ERROR, and the harness is killed', async () => {
    const runId = await startUnbounded({ chunks: 250, delayMs: 0, chunkBytes: 1_000 });
    const done = await settled(runId);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'max_bytes_exceeded' } });
    expect(done.lastSeq).toBeLessThan(60);
    await harnessGone(runId);
  });

  it('RUN_MAX_SECONDS: a harness that keeps writing is stopped max_duration_exceeded', async () => {
    // 300 events (the events limit) would take 60 s: the 40 s limit comes first.
    const runId = await startUnbounded({ chunks: 1_000, delayMs: 200 });
    const done = await settled(runId, 60_000);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'max_duration_exceeded' } });
    expect(done.finishedAt! - done.startedAt).toBeGreaterThanOrEqual(40_000);
    await harnessGone(runId);
  });

  it('IDLE_TIMEOUT_SECONDS: a harness that stops writing fails idle_timeout though keep-alives keep coming', async () => {
    const { json } = await createRun({ prompt: 'then silence', harnessOptions: { chunks: 10, delayMs: 0, stallAt: 2 } });
    const done = await settled(json.runId);
    expect(done).toMatchObject({ status: 'failed', error: { code: 'idle_timeout' } });
    await harnessGone(json.runId);
  });

  it('keeps the keep-alive promise: quiet spells longer than the stall budget but within the idle one complete', async () => {
    // 19 chunks 1.8 s apart: each gap outlasts the 1.5 s stall budget, which only keep-alives bridge.
    const { json } = await createRun({ prompt: 'long tool call', harnessOptions: { chunks: 0, delayMs: 1_800 } });
    const done = await settled(json.runId, 60_000);
    expect(done.status).toBe('completed');
  });
});

describe('MAX_CLIENTS_PER_RUN', () => {
  it('answers the fourth client with 429 too_many_clients before any upgrade, WebSocket or HTTP, and admits one again after a close', async () => {
    const { json } = await createRun({ prompt: 'popular', harnessOptions: { chunks: 30, delayMs: 200 } });
    const tails = await Promise.all([openTail(json.runId), openTail(json.runId), openTail(json.runId)]);
    const refused = await api(`/runs/${json.runId}/ws`, { headers: { upgrade: 'websocket' } });
    expect(refused.status).toBe(429);
    expect(refused.webSocket).toBeNull();
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('too_many_clients');
    const http = await api(`/runs/${json.runId}/events`);
    expect(http.status).toBe(429);
    await http.body?.cancel();
    tails[0]!.ws.close(1000);
    await tails[0]!.closed;
    let again = await api(`/runs/${json.runId}/ws`, { headers: { upgrade: 'websocket' } });
    for (let i = 0; i < 100 && again.status === 429; i++) {
      await again.body?.cancel();
      await new Promise((resolve) => setTimeout(resolve, 20));
      again = await api(`/runs/${json.runId}/ws`, { headers: { upgrade: 'websocket' } });
    }
    expect(again.status).toBe(101);
    again.webSocket!.accept();
    again.webSocket!.close(1000);
    for (const tail of tails.slice(1)) tail.ws.close(1000);
  });
});

describe('MAX_THREAD_MESSAGES', () => {
  it('refuses the turn past the limit with 409 thread_full, stores nothing for it, and the thread stays readable', async () => {
    const threadId = 'thread-full';
    const turn = async (prompt: string) => createRun({ prompt, threadId, harnessOptions: { chunks: 2, delayMs: 0 } });
    const first = await turn('one');
    expect(first.res.status).toBe(202);
    expect((await settled(first.json.runId)).status).toBe('completed');
    const history = (await (await api(`/threads/${threadId}/messages`)).json()) as { messages: unknown[] };
    expect(history.messages.length).toBeGreaterThan(1);
    expect(history.messages.length).toBeLessThanOrEqual(6);

    // Every turn adds at least its user message and the answer; the limit falls within three turns.
    let refused: Response | undefined;
    for (let i = 0; i < 3 && !refused; i++) {
      const before = (await listDurableObjectIds(env.RUNS)).length;
      const { res, json } = await turn(`more ${i}`);
      if (res.status === 409) {
        expect((json as unknown as { error: { code: string } }).error.code).toBe('thread_full');
        expect((await listDurableObjectIds(env.RUNS)).length).toBe(before);
        refused = res;
      } else {
        expect(res.status).toBe(202);
        await settled(json.runId);
      }
    }
    expect(refused).toBeDefined();
    expect((await api(`/threads/${threadId}`)).status).toBe(200);
    const messages = await api(`/threads/${threadId}/messages`);
    expect(messages.status).toBe(200);
    expect(((await messages.json()) as { messages: unknown[] }).messages.length).toBeGreaterThan(6);
  });
});
