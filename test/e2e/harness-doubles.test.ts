import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelMessage } from '@tanstack/ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStatusFrame, parseTailFrame } from '../../src/protocol/index.ts';
import { startProviderDouble, type ProviderDouble } from '../../container/test/doubles/provider-double.ts';
import { agUiProblems } from '../support/ag-ui-check.ts';
import { postRun, startStack, waitSettled } from './stack.ts';
import type { LocalStack } from '../../scripts/local-stack.ts';

/**
 * Every harness end to end through the local stack (`npm start`'s Worker and
 * runner) and its real adapter: claude-code and codex with the CLI doubles on
 * PATH, chat with the provider double at ANTHROPIC_BASE_URL / OPENAI_BASE_URL.
 */
const DOUBLES = fileURLToPath(new URL('../../container/test/doubles/bin', import.meta.url));

let provider: ProviderDouble;
let stack: LocalStack;
let workspaces: string;
beforeAll(async () => {
  provider = await startProviderDouble();
  workspaces = mkdtempSync(join(tmpdir(), 'relay-e2e-doubles-'));
  stack = await startStack({
    runnerEnv: {
      PATH: `${DOUBLES}${delimiter}${process.env.PATH ?? ''}`,
      RUNNER_WORKSPACE_ROOT: workspaces,
      ANTHROPIC_API_KEY: 'sk-ant-api03-dummy-e2e-key-0123456789',
      ANTHROPIC_BASE_URL: provider.url,
      OPENAI_API_KEY: 'sk-proj-dummy-e2e-key-0123456789',
      OPENAI_BASE_URL: `${provider.url}/v1`,
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await provider?.close();
  if (workspaces) rmSync(workspaces, { recursive: true, force: true });
});

async function storedChunks(runId: string): Promise<unknown[]> {
  const res = await fetch(`${stack.url}/runs/${runId}/events?fromSeq=-1`);
  expect(res.status).toBe(200);
  const chunks: unknown[] = [];
  for (const line of (await res.text()).split('\n')) {
    if (line.trim() === '') continue;
    const frame = parseTailFrame(JSON.parse(line));
    if (!isStatusFrame(frame)) chunks.push(frame.chunk);
  }
  return chunks;
}

async function transcript(threadId: string): Promise<ModelMessage[]> {
  const res = await fetch(`${stack.url}/threads/${threadId}/messages`);
  expect(res.status).toBe(200);
  return ((await res.json()) as { messages: ModelMessage[] }).messages;
}

const CASES = [
  { harness: 'demo', body: { harnessOptions: { chunks: 5, delayMs: 0 } }, text: 'Done: 5 deltas streamed.', tool: 'count_words' },
  { harness: 'claude-code', body: {}, text: 'Done: list the files.', tool: 'Bash' },
  { harness: 'codex', body: {}, text: 'Done: list the files.', tool: 'command_execution' },
  // The chat harness has no tools of its own to run: the model's call is recorded and the turn ends.
  { harness: 'chat', body: { model: 'claude-sonnet-4-6' }, text: 'I will list the files.', tool: 'list_files' },
  { harness: 'chat', body: { model: 'gpt-5.1' }, text: 'I will list the files.', tool: 'list_files' },
] as const;

describe('every harness end to end with its double', () => {
  it.each(CASES)('$harness $body.model completes, every chunk is AG-UI 1.0, the thread has its text and tool calls', async ({ harness, body, text, tool }) => {
    const run = await postRun(stack.url, { prompt: 'list the files [scenario:tool]', harness, ...body });
    const record = await waitSettled(stack.url, run.runId);
    expect(record).toMatchObject({ status: 'completed' });
    const chunks = await storedChunks(run.runId);
    expect(await agUiProblems(chunks)).toEqual([]);
    const messages = await transcript(run.threadId);
    const assistant = messages.filter((message) => message.role === 'assistant');
    expect(assistant.map((message) => message.content).join('')).toContain(text);
    expect(assistant.flatMap((message) => message.toolCalls ?? []).map((call) => call.function.name)).toContain(tool);
  });

  it('passes OPENAI_BASE_URL to codex as openai_base_url, and OPENAI_API_KEY as CODEX_API_KEY', async () => {
    const before = provider.requests.length;
    const run = await postRun(stack.url, { prompt: 'list the files [scenario:tool]', harness: 'codex' });
    expect(await waitSettled(stack.url, run.runId)).toMatchObject({ status: 'completed' });
    expect(provider.requests.slice(before)).toEqual([{ path: '/v1/responses', key: 'sk-proj-dummy-e2e-key-0123456789' }]);
  });

  it.each([
    ['demo', { harnessOptions: { chunks: 1000, chunkBytes: 20, delayMs: 0 } }],
    ['claude-code', {}],
    ['codex', {}],
    ['chat', { model: 'claude-sonnet-4-6' }],
    ['chat', { model: 'gpt-5.1' }],
  ] as const)('%s %o: a 20,000-character answer is stored in at most 1.2x its deltas as delta-only chunk JSON', async (harness, body) => {
    const run = await postRun(stack.url, { prompt: 'write a lot [scenario:long 20000]', harness, ...body });
    expect(await waitSettled(stack.url, run.runId)).toMatchObject({ status: 'completed' });
    const chunks = (await storedChunks(run.runId)) as { type: string; messageId?: string; delta?: string; timestamp?: number }[];
    const line = (value: unknown) => JSON.stringify(value).length + 1;
    const deltas = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT');
    expect(deltas.reduce((sum, chunk) => sum + (chunk.delta ?? '').length, 0)).toBeGreaterThanOrEqual(20_000);
    const deltaOnly = deltas.reduce((sum, { type, messageId, delta, timestamp }) => sum + line({ type, messageId, delta, timestamp }), 0);
    expect(chunks.reduce((sum, chunk) => sum + line(chunk), 0)).toBeLessThanOrEqual(1.2 * deltaOnly);
  });

  it.each([
    ['claude-code', {}, 'harness_failed', 'API Error: 500'],
    ['codex', {}, 'provider_error', 'last status: 500'],
    ['chat', { model: 'claude-sonnet-4-6' }, 'provider_error', 'Internal server error'],
    ['chat', { model: 'gpt-5.1' }, 'provider_error', 'The server had an error'],
  ] as const)('%s %o: an API error ends the run failed with %s and the provider message', async (harness, body, code, words) => {
    const run = await postRun(stack.url, { prompt: 'hello [scenario:api-error]', harness, ...body });
    const record = await waitSettled(stack.url, run.runId);
    expect(record).toMatchObject({ status: 'failed', error: { code } });
    expect(record.error?.message).toContain(words);
  });
});
