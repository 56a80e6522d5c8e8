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
