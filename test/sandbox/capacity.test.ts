import { afterEach, describe, expect, it } from 'vitest';
import { containersOf, createRun, host, sandboxIdOf, setPlatform, settled, type HostInstance } from './helpers.ts';

afterEach(async () => {
  await setPlatform({});
});

describe('the platform refuses a start', () => {
  it('starts rate-limited (429 from @cloudflare/containers, a 503 from the Sandbox class): the run fails runner_unavailable, and the message names max_instances', async () => {
    await setPlatform({ refuse: 'rate_limited' });
    const created = await createRun({ prompt: 'too fast', harnessOptions: { chunks: 3, delayMs: 0 } });
    const record = await settled(created.json.runId);
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'runner_unavailable' });
    expect(record.error!.message).toMatch(/max_instances/);
    expect(record.error!.message).toMatch(/too many containers per second/);
  });

  it('max_instances reached (503): with SANDBOX_REUSE=thread every thread awake within sleepAfter holds an instance, so the next thread is refused until one frees', async () => {
    // An account with room for two: what earlier files left awake is stopped
    // first (files run one at a time), so none of it can sleep mid-test and free a place.
    for (const { instance } of await host<HostInstance[]>('/instances')) await host(`/instances/${instance}`, { method: 'DELETE' });
    await setPlatform({ maxInstances: 2 });
    for (const name of ['a', 'b']) {
      const run = await createRun({ prompt: name, threadId: `cap-${name}-${crypto.randomUUID()}`, harnessOptions: { chunks: 3, delayMs: 0 } });
      expect((await settled(run.json.runId)).status).toBe('completed');
    }
    // Both finished, both still awake (sleepAfter has not passed): the third thread finds no instance.
    const third = `cap-c-${crypto.randomUUID()}`;
    const refused = await createRun({ prompt: 'c', threadId: third, harnessOptions: { chunks: 3, delayMs: 0 } });
    const record = await settled(refused.json.runId);
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'runner_unavailable' });
    expect(record.error!.message).toMatch(/max_instances/);
    expect(record.error!.message).toMatch(/no container instance/i);
    expect(await containersOf(await sandboxIdOf(refused.json.runId))).toEqual([]);

    // One sandbox sleeps (here: stopped): its instance is free, and the thread gets in.
    const [oldest] = await host<HostInstance[]>('/instances');
    await host(`/instances/${oldest!.instance}`, { method: 'DELETE' });
    const admitted = await createRun({ prompt: 'c again', threadId: third, harnessOptions: { chunks: 3, delayMs: 0 } });
    expect((await settled(admitted.json.runId)).status).toBe('completed');
  });
});
