import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig, type RelayEnv } from '../../src/config.ts';
import { ApiError } from '../../src/http/errors.ts';
import { requireHarnessAvailable } from '../../src/http/preflight.ts';
import type { CreateRunInput, HarnessName } from '../../src/protocol/index.ts';
import { startRunner, type RunningRunner } from '../../container/src/server.ts';

/**
 * The Worker's preflight, both ways it decides: from the secrets it holds
 * (the container transport, where asking would boot a sandbox) and from the
 * real runner's `/health` (RUNNER_URL).
 */

const input = (harness: HarnessName, extra: Partial<CreateRunInput> = {}): CreateRunInput => ({ messages: [{ role: 'user', content: 'hi' }], harness, ...extra });

async function refusal(run: Promise<void>): Promise<string> {
  const error = await run.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(ApiError);
  expect((error as ApiError).status).toBe(400);
  expect((error as ApiError).code).toBe('harness_unavailable');
  return (error as ApiError).message;
}

describe('preflight from the secrets the Worker holds (container transport)', () => {
  const check = (harness: HarnessName, vars: Record<string, string>, extra: Partial<CreateRunInput> = {}) => {
    const env = { DEFAULT_HARNESS: 'demo', ...vars } as unknown as RelayEnv;
    return requireHarnessAvailable(input(harness, extra), env, readConfig(env));
  };

  it('lets the demo through with nothing set', async () => {
    await expect(check('demo', {})).resolves.toBeUndefined();
  });

  it('names the missing secret of each harness', async () => {
    expect(await refusal(check('claude-code', {}))).toMatch(/ANTHROPIC_API_KEY \(or CLAUDE_CODE_OAUTH_TOKEN\)/);
    expect(await refusal(check('codex', { ANTHROPIC_API_KEY: 'sk-a' }))).toContain('OPENAI_API_KEY');
    expect(await refusal(check('chat', {}))).toContain('ANTHROPIC_API_KEY');
    expect(await refusal(check('chat', { ANTHROPIC_API_KEY: 'sk-a' }, { model: 'gpt-5.1' }))).toContain('OPENAI_API_KEY');
    expect(await refusal(check('chat', { OPENAI_API_KEY: 'sk-o' }, { harnessOptions: { provider: 'anthropic' } }))).toContain('ANTHROPIC_API_KEY');
  });

  it('accepts a harness whose secret is set', async () => {
    await expect(check('claude-code', { CLAUDE_CODE_OAUTH_TOKEN: 'oauth' })).resolves.toBeUndefined();
    await expect(check('codex', { OPENAI_API_KEY: 'sk-o' })).resolves.toBeUndefined();
    // No model, no provider: the chat harness takes the provider whose key is set.
    await expect(check('chat', { OPENAI_API_KEY: 'sk-o' })).resolves.toBeUndefined();
  });
});

describe("preflight from the real runner's /health (RUNNER_URL)", () => {
  let runner: RunningRunner;

  beforeAll(async () => {
    // A runner with no CLI on PATH and only an OpenAI key.
    runner = await startRunner({ port: 0, host: '127.0.0.1', env: { PATH: '', RUNNER_TOKEN: 'preflight-runner-token', OPENAI_API_KEY: 'sk-o-preflight' }, log: () => {} });
  });
  afterAll(() => runner?.close());

  const check = (harness: HarnessName, extra: Partial<CreateRunInput> = {}) => {
    const env = { RUNNER_URL: runner.url, RUNNER_TOKEN: 'preflight-runner-token' } as unknown as RelayEnv;
    return requireHarnessAvailable(input(harness, extra), env, readConfig(env));
  };

  it('answers with what the runner lacks: a CLI, a key', async () => {
    expect(await refusal(check('claude-code'))).toMatch(/`claude` CLI is not on PATH/);
    expect(await refusal(check('codex'))).toMatch(/`codex` CLI is not on PATH/);
    expect(await refusal(check('chat', { harnessOptions: { provider: 'anthropic' } }))).toContain('ANTHROPIC_API_KEY');
  });

  it('lets through what the runner can run', async () => {
    await expect(check('chat')).resolves.toBeUndefined();
    await expect(check('chat', { model: 'gpt-5.1' })).resolves.toBeUndefined();
  });

  it('answers 503 runner_unavailable when the runner cannot be asked', async () => {
    const env = { RUNNER_URL: 'http://127.0.0.1:1', RUNNER_TOKEN: 't' } as unknown as RelayEnv;
    const error = await requireHarnessAvailable(input('codex'), env, readConfig(env)).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: 'runner_unavailable' });
  });
});
