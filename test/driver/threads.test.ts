import type { ModelMessage } from '@tanstack/ai';
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { RunView } from '../../src/protocol/index.ts';
import { isSandboxToolCall } from '../../src/thread/transcript.ts';
import { api, createRun, runStub, settled } from '../workers/helpers.ts';

async function transcript(threadId: string): Promise<ModelMessage[]> {
  // The thread hears about the run's end just after the run's record says so.
  for (let i = 0; i < 500; i++) {
    const res = await api(`/threads/${threadId}`);
    const summary = (await res.json()) as { activeRunId: string | null };
    if (res.status === 200 && summary.activeRunId === null) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const res = await api(`/threads/${threadId}/messages`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: ModelMessage[] }).messages;
}

async function runnerRequest(runId: string): Promise<{ messages: ModelMessage[] } | null> {
  return (await (await fetch(`http://runner.test/control/requests/${runId}`)).json()) as { messages: ModelMessage[] } | null;
}

describe('threads, with the demo harness on the real runner', () => {
  it('carries the first turn into the second, without the harness tool calls it observed', async () => {
    const threadId = `thread-${crypto.randomUUID()}`;
    const first = await createRun({ prompt: 'first question', threadId, harnessOptions: { chunks: 5, delayMs: 0 } });
    expect(first.res.status).toBe(202);
    expect((await settled(first.json.runId)).status).toBe('completed');

    const afterFirst = await transcript(threadId);
    expect(afterFirst[0]).toMatchObject({ role: 'user', content: 'first question' });
    const assistantText = afterFirst.filter((m) => m.role === 'assistant' && typeof m.content === 'string' && m.content !== '');
    expect(assistantText.length).toBeGreaterThan(0);
    // The demo's tool call ran in the sandbox: it is in the transcript, marked, with its result right after it.
    const call = afterFirst.findIndex((m) => m.role === 'assistant' && (m.toolCalls?.length ?? 0) > 0);
    expect(call).toBeGreaterThan(0);
    expect(isSandboxToolCall(afterFirst[call]!.toolCalls![0]!)).toBe(true);
    expect(afterFirst[call + 1]).toMatchObject({ role: 'tool', toolCallId: afterFirst[call]!.toolCalls![0]!.id });

    const second = await createRun({ prompt: 'second question', threadId, harnessOptions: { chunks: 5, delayMs: 0 } });
    expect(second.res.status).toBe(202);
    const sent = (await runnerRequest(second.json.runId))!.messages;
    expect(sent[0]).toMatchObject({ role: 'user', content: 'first question' });
    expect(sent.at(-1)).toMatchObject({ role: 'user', content: 'second question' });
    for (const text of assistantText) expect(sent.some((m) => m.role === 'assistant' && m.content === text.content)).toBe(true);
    expect(sent.some((m) => m.role === 'tool' || (m.toolCalls?.length ?? 0) > 0)).toBe(false);

    await settled(second.json.runId);
    const afterSecond = await transcript(threadId);
    expect(afterSecond.slice(0, afterFirst.length)).toEqual(afterFirst);
    expect(afterSecond.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['first question', 'second question']);
    const summary = (await (await api(`/threads/${threadId}`)).json()) as { runs: RunView[]; activeRunId: string | null };
    expect(summary.activeRunId).toBeNull();
    expect(summary.runs.map((r) => [r.runId, r.status])).toEqual([
      [first.json.runId, 'completed'],
      [second.json.runId, 'completed'],
    ]);
    // The runs' records, as GET /runs/:runId serves them.
    for (const run of summary.runs) {
      const { links: _links, ...record } = (await (await api(`/runs/${run.runId}`)).json()) as RunView & { links: unknown };
      expect(run).toEqual(record);
    }
  });

  it('starts a turn over from its thread after its object restarted before the runner saw it', async () => {
    const threadId = `restart-${crypto.randomUUID()}`;
    const first = await createRun({ prompt: 'first question', threadId, harnessOptions: { chunks: 3, delayMs: 0 } });
    expect((await settled(first.json.runId)).status).toBe('completed');
    await transcript(threadId);
    const second = await createRun({ prompt: 'second question', threadId, model: 'fault:hang-first-start', harnessOptions: { chunks: 3, delayMs: 0 } });
    expect(second.res.status).toBe(202);
    while ((await runnerRequest(second.json.runId)) === null) await new Promise((resolve) => setTimeout(resolve, 5));
    // The object dies with its first start unanswered; its alarm finds the runner never saw the run.
    await abortAllDurableObjects();
    await runDurableObjectAlarm(runStub(second.json.runId));
    const done = await settled(second.json.runId);
    expect(done.error).toBeUndefined();
    expect(done.status).toBe('completed');
    // The run stored only its turn; the runner still got the thread so far, from the thread.
    const stored = await runInDurableObject(runStub(second.json.runId), (_object, state) =>
      JSON.parse(state.storage.sql.exec<{ request: string }>('SELECT request FROM run').one().request) as { messages: ModelMessage[] },
    );
    expect(stored.messages).toEqual([{ role: 'user', content: 'second question' }]);
    const sent = (await runnerRequest(second.json.runId))!.messages;
    expect(sent[0]).toMatchObject({ role: 'user', content: 'first question' });
    expect(sent.some((m) => m.role === 'assistant')).toBe(true);
    expect(sent.at(-1)).toMatchObject({ role: 'user', content: 'second question' });
  });

  it('refuses a second run on a busy thread with 409 thread_busy, and starts nothing', async () => {
    const threadId = `busy-${crypto.randomUUID()}`;
    const first = await createRun({ prompt: 'long one', threadId, harnessOptions: { chunks: 400, delayMs: 10 } });
    expect(first.res.status).toBe(202);
    const second = await createRun({ prompt: 'too soon', threadId });
    expect(second.res.status).toBe(409);
    expect(second.json).toMatchObject({ error: { code: 'thread_busy' } });
    const summary = (await (await api(`/threads/${threadId}`)).json()) as { runs: unknown[]; activeRunId: string };
    expect(summary.runs).toHaveLength(1);
    expect(summary.activeRunId).toBe(first.json.runId);
    // Cancelling frees the thread for the next turn.
    await api(`/runs/${first.json.runId}/cancel`, { method: 'POST' });
    const third = await createRun({ prompt: 'now', threadId, harnessOptions: { chunks: 3, delayMs: 0 } });
    expect(third.res.status).toBe(202);
  });

  it('answers 404 for an unknown or malformed thread', async () => {
    for (const path of ['/threads/nope-never', '/threads/nope-never/messages', '/threads/bad%20id']) {
      const res = await api(path);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'thread_not_found' } });
    }
  });
});
