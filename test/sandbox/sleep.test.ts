import { describe, expect, it } from 'vitest';
import { containersOf, createRun, eventually, sandboxIdOf, sandboxOf, seqsOf, settled } from './helpers.ts';

describe('sleepAfter', () => {
  it('a stream that outlives sleepAfter keeps the container up; once idle it sleeps, and the next turn finds it empty', async () => {
    const threadId = `sleepy-${crypto.randomUUID()}`;
    // About 6 s of output, three times the sleep window set below.
    const created = await createRun({ prompt: 'long', threadId, harnessOptions: { chunks: 120, delayMs: 50 } });
    const sandboxId = await sandboxIdOf(created.json.runId);
    await sandboxOf(sandboxId).setSleepAfter('2s');
    const [container] = await eventually('the container is up', async () => {
      const list = await containersOf(sandboxId);
      return list.length > 0 ? list : null;
    });

    const record = await settled(created.json.runId);
    expect(record.status).toBe('completed');
    expect(await seqsOf(created.json.runId)).toEqual(Array.from({ length: record.lastSeq + 1 }, (_, i) => i));
    // The same container throughout: the open stream counted as activity.
    expect((await containersOf(sandboxId)).map((c) => c.instance)).toEqual([container!.instance]);

    // Idle past sleepAfter: the platform stops it (SIGTERM, exit 0), and with it everything it held.
    await eventually('the idle container sleeps', async () => (await containersOf(sandboxId)).length === 0);
    const next = await createRun({ prompt: 'again', threadId, harnessOptions: { chunks: 3, delayMs: 0 } });
    expect((await settled(next.json.runId)).status).toBe('completed');
    expect(await sandboxIdOf(next.json.runId)).toBe(sandboxId);
    const [woken] = await containersOf(sandboxId);
    expect(woken!.instance).not.toBe(container!.instance);
  });
});
