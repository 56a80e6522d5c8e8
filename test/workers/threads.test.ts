import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { api, createRun, feed, finished, runStub } from './helpers.ts';

function sandboxOf(runId: string): Promise<string | null> {
  return runInDurableObject(runStub(runId), (_object, state) => state.storage.sql.exec<{ s: string | null }>('SELECT sandbox_id AS s FROM run').one().s);
}

async function untilIdle(threadId: string): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const summary = (await (await api(`/threads/${threadId}`)).json()) as { activeRunId: string | null };
    if (summary.activeRunId === null) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error(`thread ${threadId} never went idle`);
}

describe('one sandbox per thread', () => {
  it('runs every turn of a thread in the same sandbox, and other threads elsewhere', async () => {
    const first = await createRun({ prompt: 'one', threadId: 'sandbox-thread-a' });
    await feed(first.json.runId, [finished(first.json.runId)]);
    await untilIdle('sandbox-thread-a');
    const second = await createRun({ prompt: 'two', threadId: 'sandbox-thread-a' });
    const other = await createRun({ prompt: 'three', threadId: 'sandbox-thread-b' });
    const sandbox = await sandboxOf(first.json.runId);
    expect(sandbox).toMatch(/^[a-z0-9-]{1,63}$/);
    expect(await sandboxOf(second.json.runId)).toBe(sandbox);
    expect(await sandboxOf(other.json.runId)).not.toBe(sandbox);
  });

  it('tells the thread about a run that ended, so the thread is free again', async () => {
    const run = await createRun({ prompt: 'solo', threadId: 'free-again' });
    expect((await createRun({ prompt: 'busy', threadId: 'free-again' })).res.status).toBe(409);
    await feed(run.json.runId, [finished(run.json.runId)]);
    await untilIdle('free-again');
    expect((await createRun({ prompt: 'next', threadId: 'free-again' })).res.status).toBe(202);
  });
});

describe('the active turn', () => {
  it("shows a joining tab the running turn's own prompt, which no record or transcript holds yet, and nothing once it ended", async () => {
    const threadId = `active-turn-${crypto.randomUUID()}`;
    const first = await createRun({ prompt: 'the first question', threadId });
    await feed(first.json.runId, [finished(first.json.runId)]);
    await untilIdle(threadId);
    const second = await createRun({ prompt: 'the follow-up', threadId });
    const running = (await (await api(`/threads/${threadId}`)).json()) as { activeTurn: unknown };
    expect(running.activeTurn).toEqual({ runId: second.json.runId, messages: [{ role: 'user', content: 'the follow-up' }] });
    await feed(second.json.runId, [finished(second.json.runId)]);
    await untilIdle(threadId);
    expect(((await (await api(`/threads/${threadId}`)).json()) as { activeTurn: unknown }).activeTurn).toBeNull();
  });
});

describe('one active run per thread, under concurrency', () => {
  it('lets exactly one of two turns fired together start, right after the last run ended', async () => {
    for (let i = 0; i < 5; i++) {
      const threadId = `race-${i}-${crypto.randomUUID()}`;
      const last = await createRun({ prompt: 'first', threadId });
      // Ended, and its thread not told yet (as if the notification were still on its way):
      // the thread still names it active, so each turn must ask its object whether it ended.
      await runInDurableObject(runStub(last.json.runId), (_object, state) => {
        state.storage.sql.exec('UPDATE run SET thread_notified_at = 1');
      });
      await feed(last.json.runId, [finished(last.json.runId)]);
      const turns = await Promise.all([createRun({ prompt: 'a', threadId }), createRun({ prompt: 'b', threadId })]);
      expect(turns.map((t) => t.res.status).sort()).toEqual([202, 409]);
      const started = turns.find((t) => t.res.status === 202)!.json.runId;
      const refused = turns.find((t) => t.res.status === 409)!.json;
      expect(refused).toMatchObject({ error: { code: 'thread_busy' } });
      const summary = (await (await api(`/threads/${threadId}`)).json()) as { activeRunId: string; runs: Array<{ runId: string }> };
      expect(summary.activeRunId).toBe(started);
      expect(summary.runs.map((r) => r.runId)).toEqual([last.json.runId, started]);
    }
  });

  it('refuses a second turn fired together with the first on a new thread', async () => {
    const threadId = `race-new-${crypto.randomUUID()}`;
    const turns = await Promise.all([createRun({ prompt: 'a', threadId }), createRun({ prompt: 'b', threadId })]);
    expect(turns.map((t) => t.res.status).sort()).toEqual([202, 409]);
  });
});

describe('the transcript is kept once, by the thread', () => {
  it("stores only a run's own turn in the run, however long the thread is", async () => {
    const threadId = `once-${crypto.randomUUID()}`;
    for (const [i, prompt] of ['first', 'second', 'third'].entries()) {
      const turn = await createRun({ prompt, threadId });
      expect(turn.res.status).toBe(202);
      const stored = await runInDurableObject(runStub(turn.json.runId), (_object, state) =>
        JSON.parse(state.storage.sql.exec<{ request: string }>('SELECT request FROM run').one().request) as { messages: unknown[] },
      );
      expect(stored.messages).toEqual([{ role: 'user', content: prompt }]);
      await feed(turn.json.runId, [{ type: 'TEXT_MESSAGE_CONTENT', messageId: `m${i}`, delta: `answer ${i}` } as never, finished(turn.json.runId)]);
      await untilIdle(threadId);
    }
    const { messages } = (await (await api(`/threads/${threadId}/messages`)).json()) as { messages: Array<{ role: string; content: unknown }> };
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['first', 'second', 'third']);
  });
});
