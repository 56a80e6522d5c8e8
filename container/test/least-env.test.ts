import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnerRunStatus } from '../../src/protocol/index.ts';
import { json, PATH_WITH_FIXTURES, runBody, runId, startCliRunner, stream, TEST_RUNNER_TOKEN, type CliRunner } from './helpers.ts';

/**
 * SPEC "Least environment", read from the live processes: /proc/<pid>/environ
 * of a harness process (its pid from GET /runs/:runId) and of the CLI it started.
 */
const ANTHROPIC_KEY = 'sk-ant-least-env-own-key-7d2c';
const RUNNER_SIDE = {
  API_TOKEN: 'api-token-the-harness-must-not-see',
  ATTACH_TOKEN_SECRET: 'attach-secret-the-harness-must-not-see',
  RUNNER_TOKEN: TEST_RUNNER_TOKEN,
  RUNNER_SECRET: 'runner-secret-the-harness-must-not-see',
  OPENAI_API_KEY: 'sk-openai-key-of-another-harness',
  SOME_OTHER_PASSWORD: 'whatever-the-owner-exported',
};

let runner: CliRunner;
beforeAll(async () => {
  runner = await startCliRunner('least-env', { ...RUNNER_SIDE, ANTHROPIC_API_KEY: ANTHROPIC_KEY });
});
afterAll(() => runner.close());

function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
}

function expectNoRunnerSecrets(env: Map<string, string>): void {
  for (const name of ['API_TOKEN', 'ATTACH_TOKEN_SECRET', 'RUNNER_TOKEN', 'RUNNER_SECRET', 'SOME_OTHER_PASSWORD']) expect(env.has(name), name).toBe(false);
  const values = [...env.values()].join('\n');
  for (const value of Object.values(RUNNER_SIDE)) expect(values).not.toContain(value);
}

async function pidOf(id: string): Promise<number> {
  const { pid } = (await json(`${runner.url}/runs/${id}`)).body as RunnerRunStatus;
  expect(pid).toBeTypeOf('number');
  return pid!;
}

describe('a harness process’s environment', () => {
  it('holds none of the runner’s secrets, only PATH, HOME and basics for the demo harness', async () => {
    const id = runId('env_demo');
    const run = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 10, stallAt: 2, delayMs: 0 } }));
    await run.chunks(3);
    const env = environOf(await pidOf(id));
    expectNoRunnerSecrets(env);
    expect(env.has('ANTHROPIC_API_KEY')).toBe(false);
    expect(env.get('PATH')).toBe(PATH_WITH_FIXTURES);
    await json(`${runner.url}/runs/${id}/cancel`, 'POST');
  });

  it('gives claude-code its own key, and neither it nor the CLI it runs any other secret', async () => {
    const id = runId('env_claude');
    const run = await stream(`${runner.url}/run`, 'POST', runBody(id, { harness: 'claude-code', messages: [{ role: 'user', content: 'MODE:hang' }] }));
    const [, session] = await run.chunks(2);
    const cliPid = Number(String((session?.value as { sessionId: string }).sessionId).replace('fake-session-', ''));
    for (const pid of [await pidOf(id), cliPid]) {
      const env = environOf(pid);
      expectNoRunnerSecrets(env);
      expect(env.get('ANTHROPIC_API_KEY')).toBe(ANTHROPIC_KEY);
      expect(env.has('OPENAI_API_KEY')).toBe(false);
    }
    await json(`${runner.url}/runs/${id}/cancel`, 'POST');
  });
});
