import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../scripts/local-stack.ts';
import type { RunnerRunStatus } from '../../src/protocol/index.ts';
import { postRun, startStack, waitSettled } from './stack.ts';

/**
 * IDLE_TIMEOUT_SECONDS through the whole local stack: a harness that stops
 * writing is ended even though the runner's keep-alive lines (every 200 ms
 * here) keep the transport alive, and its process is gone afterwards. That a
 * quiet spell within the idle budget still completes is proved in the
 * `limits` project against the same runner program.
 */
let stack: LocalStack;

beforeAll(async () => {
  stack = await startStack({ vars: { IDLE_TIMEOUT_SECONDS: '3', STALL_TIMEOUT_SECONDS: '2' }, runnerEnv: { RUNNER_KEEPALIVE_MS: '200' } });
});

afterAll(async () => {
  await stack?.close();
});

async function runnerStatus(runId: string): Promise<RunnerRunStatus> {
  const res = await fetch(`${stack.runnerUrl}/runs/${runId}`, { headers: { authorization: `Bearer ${stack.runnerToken}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as RunnerRunStatus;
}

describe('a harness that goes quiet, end to end', () => {
  it('fails idle_timeout (not stalled: keep-alives keep coming) and leaves no harness process', async () => {
    const run = await postRun(stack.url, { prompt: 'then nothing', harnessOptions: { chunks: 5, delayMs: 0, stallAt: 0 } });
    const done = await waitSettled(stack.url, run.runId);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('idle_timeout');
    let status = await runnerStatus(run.runId);
    for (let i = 0; i < 250 && status.pid !== null; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = await runnerStatus(run.runId);
    }
    expect(status.pid).toBeNull();
  });
});
