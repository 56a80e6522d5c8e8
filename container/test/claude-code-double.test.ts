import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agUiProblems } from '../../test/support/ag-ui-check.ts';
import { answerText, DELTA_CHARS } from './doubles/scenarios.ts';
import { cleanEnv, runBody, runId, startTestRunner, stream, type Chunk, type TestRunner } from './helpers.ts';

/**
 * The claude-code harness through the real `@tanstack/ai-claude-code` adapter,
 * with the Claude Code 2.1.x double (doubles/claude-double.ts) as `claude` on PATH.
 */
const DOUBLES = fileURLToPath(new URL('./doubles/bin', import.meta.url));
const DUMMY_KEY = 'sk-ant-api03-dummy-double-key-0123456789abcdef';

let runner: TestRunner;
let workspaces: string;
beforeAll(async () => {
  workspaces = mkdtempSync(join(tmpdir(), 'relay-claude-double-'));
  runner = await startTestRunner({
    env: cleanEnv({ ANTHROPIC_API_KEY: DUMMY_KEY, PATH: `${DOUBLES}${delimiter}${process.env.PATH ?? ''}`, RUNNER_WORKSPACE_ROOT: workspaces }),
  });
});
afterAll(async () => {
  await runner.close();
  rmSync(workspaces, { recursive: true, force: true });
});

async function run(prompt: string): Promise<{ id: string; chunks: Chunk[] }> {
  const id = runId('claude_double');
  const body = runBody(id, { harness: 'claude-code', messages: [{ role: 'user', content: prompt }] });
  const { chunks, end } = await (await stream(`${runner.url}/run`, 'POST', body)).rest();
  expect(end).toBe('end');
  return { id, chunks };
}

const text = (chunks: readonly Chunk[]) =>
  chunks
    .filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT')
    .map((chunk) => chunk.delta)
    .join('');

describe('claude-code against the Claude Code 2.1.x double', () => {
  it('completes a run with a tool call in the one dialect, valid AG-UI 1.0 throughout', async () => {
    const { id, chunks } = await run('list the files [scenario:tool]');
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(chunks[0]).toMatchObject({ type: 'RUN_STARTED', runId: id, threadId: 'thread_1' });
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id, threadId: 'thread_1' });
    expect(chunks.filter((chunk) => chunk.type === 'RUN_FINISHED' || chunk.type === 'RUN_ERROR')).toHaveLength(1);
    // Deltas only: no accumulated `content`/`args` rides along.
    for (const chunk of chunks.filter((c) => c.type === 'TEXT_MESSAGE_CONTENT' || c.type === 'TOOL_CALL_ARGS')) {
      expect(Object.keys(chunk).sort()).toEqual(chunk.type === 'TEXT_MESSAGE_CONTENT' ? ['delta', 'messageId', 'timestamp', 'type'] : ['delta', 'timestamp', 'toolCallId', 'type']);
    }
    expect(text(chunks)).toBe(`I will list the files.${answerText('list the files')}`);
    const start = chunks.find((chunk) => chunk.type === 'TOOL_CALL_START');
    expect(start).toMatchObject({ toolCallName: 'Bash' });
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_END')).toMatchObject({ toolCallId: start?.toolCallId, metadata: { tanstack: { input: { command: 'ls' } } } });
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: start?.toolCallId, content: 'README.md\npackage.json\n' });
    // AG-UI 1.0 usage: an array of entries.
    expect(chunks.at(-1)?.usage).toEqual([{ model: 'sonnet', inputTokens: 12, outputTokens: 34, totalTokens: 46, cachedInputTokens: 8 }]);
  });

  it('stores a long answer in linear space: at most 1.2x the same deltas as delta-only chunks', async () => {
    const chars = 20_000;
    const { chunks } = await run(`write a lot [scenario:long ${chars}]`);
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
    const deltas = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT');
    expect(deltas).toHaveLength(chars / DELTA_CHARS);
    expect(text(chunks)).toBe(answerText('write a lot', chars));
    const stored = chunks.reduce((sum, chunk) => sum + JSON.stringify(chunk).length + 1, 0);
    const deltaOnly = deltas.reduce((sum, chunk) => sum + JSON.stringify({ type: chunk.type, messageId: chunk.messageId, delta: chunk.delta, timestamp: chunk.timestamp }).length + 1, 0);
    expect(stored).toBeLessThanOrEqual(1.2 * deltaOnly);
  });

  it.each([
    ['api-error', 'API Error: 500'],
    ['invalid-key', 'Invalid API key'],
    ['rate-limit', 'API Error: Request rejected (429)'],
    ['overloaded', 'API Error: 529'],
  ])('ends the %s scenario (result is_error: true) with RUN_ERROR harness_failed and the CLI message, never RUN_FINISHED', async (scenario, words) => {
    const { chunks } = await run(`hello [scenario:${scenario}]`);
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(chunks.some((chunk) => chunk.type === 'RUN_FINISHED')).toBe(false);
    const last = chunks.at(-1);
    expect(last).toMatchObject({ type: 'RUN_ERROR', code: 'harness_failed' });
    expect(String(last?.message)).toContain(words);
  });
});
