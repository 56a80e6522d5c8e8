import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { readConfig, type RelayEnv } from '../../src/config.ts';
import { parseRunnerRunRequest } from '../../src/protocol/index.ts';
import { RUNNER_PROCESS_ID } from '../../src/runner/sandbox-transport.ts';
import { transportFor } from '../../src/runner/select.ts';
import { containersOf, createRun, processesOf, sandboxIdOf, sandboxOf, seqsOf, settled } from './helpers.ts';

const RUNNER = 'container/src/main.ts';

/** The runner processes alive in a sandbox's one container. */
async function runnersIn(sandboxId: string) {
  const containers = await containersOf(sandboxId);
  expect(containers).toHaveLength(1);
  return (await processesOf(containers[0]!.instance)).filter((p) => p.cmdline.includes(RUNNER));
}

describe('the deployed path: Worker → RunObject → @cloudflare/sandbox → control server → runner', () => {
  it('cold start: a demo run completes in a fresh container, every seq delivered once', async () => {
    const created = await createRun({ prompt: 'cold', harnessOptions: { chunks: 30, delayMs: 0 } });
    expect(created.res.status).toBe(202);
    const record = await settled(created.json.runId);
    expect(record).toMatchObject({ status: 'completed' });
    const seqs = await seqsOf(created.json.runId);
    expect(seqs).toEqual(Array.from({ length: record.lastSeq + 1 }, (_, i) => i));
    expect(seqs.length).toBeGreaterThan(30);
    // It ran in the one container the stand-in started for the run's sandbox, under the runner startProcess started.
    const sandboxId = await sandboxIdOf(created.json.runId);
    const runner = await sandboxOf(sandboxId).getProcess(RUNNER_PROCESS_ID);
    expect(runner).toMatchObject({ status: 'running', command: 'node /opt/harness-relay/container/src/main.ts' });
    expect((await runnersIn(sandboxId)).map((p) => p.pid)).toEqual([runner!.pid]);
  });

  it('two runs on one thread share its sandbox and one runner process', async () => {
    const threadId = `shared-${crypto.randomUUID()}`;
    const first = await createRun({ prompt: 'one', threadId, harnessOptions: { chunks: 5, delayMs: 0 } });
    expect((await settled(first.json.runId)).status).toBe('completed');
    const sandboxId = await sandboxIdOf(first.json.runId);
    const [before] = await runnersIn(sandboxId);

    const second = await createRun({ prompt: 'two', threadId, harnessOptions: { chunks: 5, delayMs: 0 } });
    expect(second.res.status).toBe(202);
    expect((await settled(second.json.runId)).status).toBe('completed');
    expect(await sandboxIdOf(second.json.runId)).toBe(sandboxId);
    expect(await runnersIn(sandboxId)).toEqual([before]);
  });

  it('a concurrent start race leaves one runner, and it answers both runs', async () => {
    const sandboxId = `race-${crypto.randomUUID().slice(0, 8)}`;
    const relayEnv = env as unknown as RelayEnv;
    // Two run objects' transports, both finding no runner in a cold sandbox at once.
    const transports = [0, 1].map(() => transportFor(relayEnv, readConfig(relayEnv), () => sandboxId));
    const requests = [0, 1].map((i) =>
      parseRunnerRunRequest({
        runId: `run_race${i}${crypto.randomUUID().replaceAll('-', '')}`.slice(0, 36),
        threadId: sandboxId,
        messages: [{ role: 'user', content: `racer ${i}` }],
        harness: 'demo',
        harnessOptions: { chunks: 5, delayMs: 0 },
        tenant: null,
      }),
    );
    const bodies = await Promise.all(transports.map(async (transport, i) => new TextDecoder().decode(await (await transport.start(requests[i]!)).arrayBuffer())));
    for (const body of bodies) {
      const types = body.split('\n').filter((line) => line.trim() !== '').map((line) => (JSON.parse(line) as { type: string }).type);
      expect(types.at(-1)).toBe('RUN_FINISHED');
    }
    expect(await runnersIn(sandboxId)).toHaveLength(1);
  });
});
