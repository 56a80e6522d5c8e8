import { describe, expect, it } from 'vitest';
import { readConfig, type RelayEnv } from '../../src/config.ts';
import { ApiError } from '../../src/http/errors.ts';
import { requireHarnessAvailable } from '../../src/http/preflight.ts';
import type { CreateRunInput, HarnessName } from '../../src/protocol/index.ts';
import { env as bindings } from 'cloudflare:test';

/**
 * The Worker's preflight, both ways it decides: from the secrets it holds
 * (the container transport, where asking would boot a sandbox) and from the
 * runner's `/health` (RUNNER_URL; the quiet runner answers what the real
 * runner's `runnerHealth` says of a machine with no CLI and no key).
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

describe("preflight from the runner's /health (RUNNER_URL)", () => {
  const check = (harness: HarnessName, extra: Partial<CreateRunInput> = {}, url = 'http://quiet-runner.test') => {
    const env = { RUNNER_URL: url, RUNNER_TOKEN: (bindings as unknown as RelayEnv).RUNNER_TOKEN } as unknown as RelayEnv;
    return requireHarnessAvailable(input(harness, extra), env, readConfig(env));
  };

  it('answers with what the runner lacks: a CLI, a key', async () => {
    expect(await refusal(check('claude-code'))).toMatch(/`claude` CLI is not on PATH/);
    expect(await refusal(check('codex'))).toMatch(/`codex` CLI is not on PATH/);
    expect(await refusal(check('chat', { harnessOptions: { provider: 'openai' } }))).toContain('OPENAI_API_KEY');
  });

  it('lets the demo through without asking', async () => {
    await expect(check('demo', {}, 'http://127.0.0.1:1')).resolves.toBeUndefined();
  });

  it('answers 503 runner_unavailable when the runner cannot say', async () => {
    // The quiet runner answers /health only at its root: here it answers 401.
    const error = await check('codex', {}, 'http://quiet-runner.test/elsewhere/').then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ status: 503, code: 'runner_unavailable' });
  });
});
