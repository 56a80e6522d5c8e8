import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agUiProblems } from '../../test/support/ag-ui-check.ts';
import { expectDeltaOnly, runHarness, storedBytes, textOf } from './doubles/harness-run.ts';
import { startProviderDouble, TOOL_NAME, type ProviderDouble } from './doubles/provider-double.ts';
import { answerText } from './doubles/scenarios.ts';
import { cleanEnv, startTestRunner, type TestRunner } from './helpers.ts';

/**
 * The chat harness through the real `@tanstack/ai-anthropic` / `-openai`
 * adapters and SDKs, against the provider double at ANTHROPIC_BASE_URL /
 * OPENAI_BASE_URL (the way a Cloudflare AI Gateway URL is configured).
 */
const ANTHROPIC_KEY = 'sk-ant-api03-dummy-provider-key-0123456789';
const OPENAI_KEY = 'sk-proj-dummy-provider-key-0123456789';

let provider: ProviderDouble;
let runner: TestRunner;
beforeAll(async () => {
  provider = await startProviderDouble();
  runner = await startTestRunner({
    env: cleanEnv({ ANTHROPIC_API_KEY: ANTHROPIC_KEY, ANTHROPIC_BASE_URL: provider.url, OPENAI_API_KEY: OPENAI_KEY, OPENAI_BASE_URL: `${provider.url}/v1` }),
  });
});
afterAll(async () => {
  await runner?.close();
  await provider?.close();
});

describe.each([
  ['anthropic', 'claude-sonnet-4-6', '/v1/messages', ANTHROPIC_KEY],
  ['openai', 'gpt-5.1', '/v1/responses', OPENAI_KEY],
] as const)('chat (%s) against the provider double', (_provider, model, path, key) => {
  it('completes a run in the one dialect, valid AG-UI 1.0 throughout, through the base URL', async () => {
    const before = provider.requests.length;
    const { id, chunks } = await runHarness(runner, 'chat', 'say hi [scenario:long 200]', { model });
    expect(await agUiProblems(chunks)).toEqual([]);
    expectDeltaOnly(chunks);
    expect(chunks[0]).toMatchObject({ type: 'RUN_STARTED', runId: id, threadId: 'thread_1' });
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id, threadId: 'thread_1' });
    expect(chunks.filter((chunk) => chunk.type === 'RUN_STARTED')).toHaveLength(1);
    expect(textOf(chunks)).toBe(answerText('say hi', 200));
    expect(provider.requests.slice(before)).toEqual([{ path, key }]);
    expect(Array.isArray(chunks.at(-1)?.usage)).toBe(true);
  });

  it('streams a tool call the model makes', async () => {
    const { chunks } = await runHarness(runner, 'chat', 'list the files [scenario:tool]', { model });
    expect(await agUiProblems(chunks)).toEqual([]);
    expectDeltaOnly(chunks);
    const start = chunks.find((chunk) => chunk.type === 'TOOL_CALL_START');
    expect(start).toMatchObject({ toolCallName: TOOL_NAME });
    const args = chunks.filter((chunk) => chunk.type === 'TOOL_CALL_ARGS' && chunk.toolCallId === start?.toolCallId).map((chunk) => chunk.delta).join('');
    expect(JSON.parse(args)).toEqual({ path: '.' });
  });

  it('stores a long answer in linear space', async () => {
    const { chunks } = await runHarness(runner, 'chat', `write a lot [scenario:long 20000]`, { model });
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(textOf(chunks)).toBe(answerText('write a lot', 20_000));
    const { stored, deltaOnly } = storedBytes(chunks);
    expect(stored).toBeLessThanOrEqual(1.2 * deltaOnly);
  });
});

const ERROR_CASES = [
  ['anthropic', 'claude-sonnet-4-6', 'api-error', 'provider_error', 'Internal server error'],
  ['anthropic', 'claude-sonnet-4-6', 'invalid-key', 'provider_auth', 'invalid x-api-key'],
  ['anthropic', 'claude-sonnet-4-6', 'rate-limit', 'rate_limited', 'per-minute rate limit'],
  ['anthropic', 'claude-sonnet-4-6', 'overloaded', 'provider_overloaded', 'Overloaded'],
  ['openai', 'gpt-5.1', 'api-error', 'provider_error', 'The server had an error'],
  ['openai', 'gpt-5.1', 'invalid-key', 'provider_auth', 'Incorrect API key provided'],
  ['openai', 'gpt-5.1', 'rate-limit', 'rate_limited', 'Rate limit reached'],
  ['openai', 'gpt-5.1', 'overloaded', 'provider_overloaded', 'currently overloaded'],
] as const;

describe('chat errors', () => {
  it.each(ERROR_CASES)('%s (%s): %s ends as RUN_ERROR %s with the provider message', async (_provider, model, scenario, code, words) => {
    const { id, chunks } = await runHarness(runner, 'chat', `hello [scenario:${scenario}]`, { model });
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(chunks[0]).toMatchObject({ type: 'RUN_STARTED', runId: id });
    expect(chunks.some((chunk) => chunk.type === 'RUN_FINISHED')).toBe(false);
    const last = chunks.at(-1);
    expect(last).toMatchObject({ type: 'RUN_ERROR', code });
    expect(String(last?.message)).toContain(words);
    // The provider's sentence, not the SDK's "<status> <raw JSON>".
    expect(String(last?.message)).not.toMatch(/^\d{3} \{/);
    // A message the error cut short is still closed before it.
    const started = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_START').map((chunk) => chunk.messageId);
    const ended = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_END').map((chunk) => chunk.messageId);
    expect(ended).toEqual(started);
  });
});
