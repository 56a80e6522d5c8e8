import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, type LocalStack } from '../../scripts/local-stack.ts';
import { newRunnerToken } from '../../scripts/private-env.ts';
import { follow, getRun, postRun, prng, startStack, waitSettled } from './stack.ts';

const RUNNER_MAIN = fileURLToPath(new URL('../../container/src/main.ts', import.meta.url));
const RUNNER_TOKEN = newRunnerToken();

/** The runner as its own process, so a test can kill or freeze it like a crashed or hung container. */
async function spawnRunner(port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [RUNNER_MAIN], {
    env: { ...process.env, RUNNER_PORT: String(port), RUNNER_HOST: '127.0.0.1', RUNNER_KEEPALIVE_MS: '500', RUNNER_TOKEN },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // It prints one line once it listens.
  await once(child.stdout!, 'data');
  return child;
}

async function until(predicate: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 3_000; i++) {
    if (await predicate()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('condition never held');
}

let stack: LocalStack;
let runner: ChildProcess;
let runnerPort: number;

beforeAll(async () => {
  runnerPort = await freePort();
  runner = await spawnRunner(runnerPort);
  stack = await startStack({ runnerUrl: `http://127.0.0.1:${runnerPort}`, runnerToken: RUNNER_TOKEN, vars: { STALL_TIMEOUT_SECONDS: '3' } });
});

afterAll(async () => {
  await stack?.close();
  runner?.kill('SIGKILL');
});

async function lastChunk(runId: string) {
  const result = await follow(stack.url, runId, prng(3), 0);
  const frame = result.frames.filter((f) => 'chunk' in f).at(-1);
  return frame && 'chunk' in frame ? frame.chunk : undefined;
}

describe('faults of the real runner, end to end', () => {
  it('fails with the harness error on failAt, and with runner_lost on crashAt', async () => {
    const failing = await postRun(stack.url, { prompt: 'fail', harnessOptions: { chunks: 30, delayMs: 0, failAt: 4 } });
    const crashing = await postRun(stack.url, { prompt: 'crash', harnessOptions: { chunks: 30, delayMs: 0, crashAt: 4 } });
    expect(await waitSettled(stack.url, failing.runId)).toMatchObject({ status: 'failed', error: { code: 'demo_failure' } });
    expect(await waitSettled(stack.url, crashing.runId)).toMatchObject({ status: 'failed', error: { code: 'runner_lost' } });
    expect(await lastChunk(crashing.runId)).toMatchObject({ type: 'RUN_ERROR', code: 'runner_lost' });
  });

  it('fails a run whose runner process is killed mid-run, with a RUN_ERROR that says so', async () => {
    const run = await postRun(stack.url, { prompt: 'doomed', harnessOptions: { chunks: 2_000, delayMs: 10 } });
    await until(async () => (await getRun(stack.url, run.runId)).lastSeq >= 10);
    runner.kill('SIGKILL');
    await once(runner, 'exit');
    try {
      const settled = await waitSettled(stack.url, run.runId);
      // The pump sees the connection drop and the reattach refused (runner_unavailable);
      // on a loaded machine the stall watchdog can notice the silence first (stalled).
      // Either way the run fails and says why.
      expect(settled.status).toBe('failed');
      expect(['runner_unavailable', 'stalled']).toContain(settled.error?.code);
      expect(await lastChunk(run.runId)).toMatchObject({ type: 'RUN_ERROR', code: settled.error?.code });
    } finally {
      runner = await spawnRunner(runnerPort);
    }
  });

  it('fails a run at once when no runner listens (runner_unavailable)', async () => {
    runner.kill('SIGKILL');
    await once(runner, 'exit');
    try {
      const run = await postRun(stack.url, { prompt: 'nobody home', harnessOptions: { chunks: 5, delayMs: 0 } });
      const settled = await waitSettled(stack.url, run.runId);
      expect(settled).toMatchObject({ status: 'failed', error: { code: 'runner_unavailable' } });
      expect(await lastChunk(run.runId)).toMatchObject({ type: 'RUN_ERROR', code: 'runner_unavailable' });
    } finally {
      runner = await spawnRunner(runnerPort);
    }
  });

  it('fails a run whose runner hangs (no byte, not even keep-alive) as stalled', async () => {
    const run = await postRun(stack.url, { prompt: 'frozen', harnessOptions: { chunks: 2_000, delayMs: 10 } });
    await until(async () => (await getRun(stack.url, run.runId)).lastSeq >= 10);
    runner.kill('SIGSTOP');
    try {
      const settled = await waitSettled(stack.url, run.runId);
      expect(settled).toMatchObject({ status: 'failed', error: { code: 'stalled' } });
      expect(await lastChunk(run.runId)).toMatchObject({ type: 'RUN_ERROR', code: 'stalled' });
    } finally {
      runner.kill('SIGCONT');
    }
  });

  it('keeps a quiet harness alive on the runner’s keep-alive lines (a long tool call is not a stall)', async () => {
    const run = await postRun(stack.url, { prompt: 'thinking hard', harnessOptions: { chunks: 10, delayMs: 0, stallAt: 2 } });
    await until(async () => (await getRun(stack.url, run.runId)).lastSeq >= 3);
    // Well past STALL_TIMEOUT_SECONDS with the harness silent: still running.
    await new Promise((resolve) => setTimeout(resolve, 4_500));
    expect((await getRun(stack.url, run.runId)).status).toBe('running');
    const cancelled = await fetch(`${stack.url}/runs/${run.runId}/cancel`, { method: 'POST' });
    expect(await cancelled.json()).toMatchObject({ status: 'aborted' });
  });
});
