import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { readConfig, type RelayEnv } from '../../src/config.ts';
import type { RunView } from '../../src/protocol/index.ts';
import { RUNNER_PROCESS_ID } from '../../src/runner/sandbox-transport.ts';
import { transportFor } from '../../src/runner/select.ts';
import { api, containersOf, createRun, eventsText, eventually, host, processesOf, sandboxEnv, sandboxIdOf, sandboxOf, seqsOf, settled } from './helpers.ts';

/** Where @cloudflare/containers 0.3.7 stores the container's status (ContainerState). */
const CONTAINER_STATE_KEY = '__CF_CONTAINER_STATE';

const RUNNER = 'container/src/main.ts';
const HARNESS = 'container/src/harness-process.ts';

async function record(runId: string): Promise<RunView> {
  return (await (await api(`/runs/${runId}`)).json()) as RunView;
}

/** A run well under way: its first chunks are stored. */
async function underWay(runId: string): Promise<RunView> {
  return eventually(`run ${runId} streams`, async () => {
    const current = await record(runId);
    return current.lastSeq >= 5 ? current : null;
  });
}

async function lastChunk(runId: string): Promise<{ type: string; code?: string; message?: string }> {
  const lines = (await eventsText(runId)).split('\n').filter((line) => line.trim() !== '');
  const frames = lines.map((line) => JSON.parse(line) as { seq?: number; chunk?: { type: string; code?: string; message?: string } });
  return frames.filter((frame) => frame.chunk !== undefined).at(-1)!.chunk!;
}

describe('faults on the deployed path', () => {
  it('the runner process killed mid-run: the transport restarts it, and the run fails runner_lost (the new runner never saw it)', async () => {
    const created = await createRun({ prompt: 'kill the runner', harnessOptions: { chunks: 400, delayMs: 20 } });
    await underWay(created.json.runId);
    const sandboxId = await sandboxIdOf(created.json.runId);
    const sandbox = sandboxOf(sandboxId);
    const before = await sandbox.getProcess(RUNNER_PROCESS_ID);
    expect(before?.status).toBe('running');
    // From inside the container, as a crash would: SIGKILL, no goodbye.
    const killed = await sandbox.exec(`kill -9 ${before!.pid}`);
    expect(killed.exitCode).toBe(0);

    const final = await settled(created.json.runId);
    expect(final.status).toBe('failed');
    expect(final.error).toMatchObject({ code: 'runner_lost' });
    expect(await lastChunk(created.json.runId)).toMatchObject({ type: 'RUN_ERROR', code: 'runner_lost' });
    // Every stored seq once, in order, the RUN_ERROR last.
    expect(await seqsOf(created.json.runId)).toEqual(Array.from({ length: final.lastSeq + 1 }, (_, i) => i));
    // The reattach started a fresh runner in the same container.
    const after = await sandbox.getProcess(RUNNER_PROCESS_ID);
    expect(after?.status).toBe('running');
    expect(after!.pid).not.toBe(before!.pid);
    const [container] = await containersOf(sandboxId);
    const runners = (await processesOf(container!.instance)).filter((p) => p.cmdline.includes(RUNNER));
    expect(runners.map((p) => p.pid)).toEqual([after!.pid]);
  });

  it('the container stopped mid-run: the next wake finds it empty, and the run fails runner_lost', async () => {
    const created = await createRun({ prompt: 'stop the container', harnessOptions: { chunks: 400, delayMs: 20 } });
    await underWay(created.json.runId);
    const sandboxId = await sandboxIdOf(created.json.runId);
    const [first] = await containersOf(sandboxId);
    expect(first).toBeDefined();
    // The platform ends the container (a host failure, an eviction): everything in it goes.
    await host(`/instances/${first!.instance}`, { method: 'DELETE' });

    const final = await settled(created.json.runId);
    expect(final.status).toBe('failed');
    expect(final.error).toMatchObject({ code: 'runner_lost' });
    expect(await seqsOf(created.json.runId)).toEqual(Array.from({ length: final.lastSeq + 1 }, (_, i) => i));
    // The wake booted a new, empty container: a new runner, and no trace of the run's harness.
    const [second] = await containersOf(sandboxId);
    expect(second).toBeDefined();
    expect(second!.instance).not.toBe(first!.instance);
    const processes = await processesOf(second!.instance);
    expect(processes.filter((p) => p.cmdline.includes(RUNNER))).toHaveLength(1);
    expect(processes.filter((p) => p.cmdline.includes(HARNESS))).toHaveLength(0);
  });

  it('cancel: the run is aborted and the harness process group is gone; the runner stays', async () => {
    const created = await createRun({ prompt: 'cancel me', harnessOptions: { chunks: 2000, delayMs: 20 } });
    await underWay(created.json.runId);
    const sandboxId = await sandboxIdOf(created.json.runId);
    const [container] = await containersOf(sandboxId);
    const harness = (await processesOf(container!.instance)).find((p) => p.cmdline.includes(HARNESS));
    expect(harness).toBeDefined();
    // The runner starts each harness as the leader of its own group.
    expect(harness!.pgid).toBe(harness!.pid);

    const cancelled = await api(`/runs/${created.json.runId}/cancel`, { method: 'POST' });
    expect(cancelled.status).toBe(200);
    expect(((await cancelled.json()) as RunView).status).toBe('aborted');
    await eventually('the harness group is gone', async () => {
      const left = (await processesOf(container!.instance)).filter((p) => p.pgid === harness!.pgid);
      return left.length === 0;
    });
    const runners = (await processesOf(container!.instance)).filter((p) => p.cmdline.includes(RUNNER));
    expect(runners).toHaveLength(1);
    expect((await record(created.json.runId)).status).toBe('aborted');
  });
});

describe('cancel on a stopped container', () => {
  it('never boots one, even when the stored state is stale and still says healthy', async () => {
    const created = await createRun({ prompt: 'finished', harnessOptions: { chunks: 3, delayMs: 0 } });
    expect((await settled(created.json.runId)).status).toBe('completed');
    const sandboxId = await sandboxIdOf(created.json.runId);
    const [container] = await containersOf(sandboxId);
    await host(`/instances/${container!.instance}`, { method: 'DELETE' });
    await eventually('the container is gone', async () => (await containersOf(sandboxId)).length === 0);
    // The object was away when its container ended, so storage still says
    // "healthy"; and the instance reads it afresh, as a new instance would
    // (the library caches the status in ContainerState.status).
    const stub = sandboxEnv.Sandbox.get(sandboxEnv.Sandbox.idFromName(sandboxId));
    await runInDurableObject(stub, async (object, state) => {
      await state.storage.put(CONTAINER_STATE_KEY, { status: 'healthy', lastChange: Date.now() });
      (object as unknown as { state: { status: unknown } }).state.status = undefined;
    });
    expect(await runInDurableObject(stub, async (object) => (await object.getState()).status)).toBe('healthy');

    const relayEnv = env as unknown as RelayEnv;
    const transport = transportFor(relayEnv, readConfig(relayEnv), () => sandboxId);
    await expect(transport.cancel(created.json.runId)).rejects.toThrow(/not running/);
    expect(await containersOf(sandboxId)).toEqual([]);
  });
});
