import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agUiProblems } from '../../test/support/ag-ui-check.ts';
import { runHarness, storedBytes, textOf, expectDeltaOnly } from './doubles/harness-run.ts';
import { answerText } from './doubles/scenarios.ts';
import { cleanEnv, startTestRunner, type TestRunner } from './helpers.ts';

/**
 * The codex harness through the real `@tanstack/ai-codex` adapter, with the
 * `codex exec --experimental-json` double (doubles/codex-double.ts) on PATH.
 */
const DOUBLES = fileURLToPath(new URL('./doubles/bin', import.meta.url));

let runner: TestRunner;
let workspaces: string;
beforeAll(async () => {
  workspaces = mkdtempSync(join(tmpdir(), 'relay-codex-double-'));
  runner = await startTestRunner({
    env: cleanEnv({ OPENAI_API_KEY: 'sk-proj-dummy-double-key-0123456789', PATH: `${DOUBLES}${delimiter}${process.env.PATH ?? ''}`, RUNNER_WORKSPACE_ROOT: workspaces }),
  });
});
afterAll(async () => {
  await runner.close();
  rmSync(workspaces, { recursive: true, force: true });
});

describe('codex against the codex exec --experimental-json double', () => {
  it('completes a run with a command in the one dialect, valid AG-UI 1.0 throughout', async () => {
    const { id, chunks } = await runHarness(runner, 'codex', 'list the files [scenario:tool]');
    expect(await agUiProblems(chunks)).toEqual([]);
    expectDeltaOnly(chunks);
    expect(chunks[0]).toMatchObject({ type: 'RUN_STARTED', runId: id, threadId: 'thread_1' });
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id, threadId: 'thread_1' });
    expect(textOf(chunks)).toBe(answerText('list the files'));
    const start = chunks.find((chunk) => chunk.type === 'TOOL_CALL_START');
    expect(start).toMatchObject({ toolCallName: 'command_execution' });
    const result = chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT');
    expect(result?.toolCallId).toBe(start?.toolCallId);
    // The adapter's result for a command: its output, exit code and status as JSON.
    expect(JSON.parse(String(result?.content))).toEqual({ aggregated_output: 'README.md\npackage.json\n', exit_code: 0, status: 'completed' });
    expect(chunks.at(-1)?.usage).toEqual([{ model: 'gpt-5.3-codex', inputTokens: 120, outputTokens: 30, totalTokens: 150, cachedInputTokens: 64, reasoningTokens: 10 }]);
  });

  it("scopes codex's per-process item ids to the run, so two turns of a thread never share a message or call id", async () => {
    const first = await runHarness(runner, 'codex', 'list the files [scenario:tool]');
    const second = await runHarness(runner, 'codex', 'list the files [scenario:tool]');
    const ids = (run: typeof first) =>
      new Set(run.chunks.flatMap((chunk) => [chunk.messageId, chunk.toolCallId, chunk.parentMessageId].filter((id): id is string => typeof id === 'string')));
    for (const run of [first, second]) {
      expect(ids(run).size).toBeGreaterThan(0);
      for (const id of ids(run)) expect(id.startsWith(`${run.id}-`), id).toBe(true);
    }
    expect([...ids(first)].filter((id) => ids(second).has(id))).toEqual([]);
  });

  it('goes on after transient "Reconnecting... n/5" notices (the WebSocket fallback) and completes', async () => {
    const { chunks } = await runHarness(runner, 'codex', 'list the files [scenario:reconnect]');
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(chunks.some((chunk) => chunk.type === 'RUN_ERROR')).toBe(false);
    expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
    expect(textOf(chunks)).toBe(answerText('list the files'));
  });

  it('stores a long answer in linear space', async () => {
    const { chunks } = await runHarness(runner, 'codex', 'write a lot [scenario:long 20000]');
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(textOf(chunks)).toBe(answerText('write a lot', 20_000));
    const { stored, deltaOnly } = storedBytes(chunks);
    expect(stored).toBeLessThanOrEqual(1.2 * deltaOnly);
  });

  it.each([
    ['api-error', 'provider_error', 'last status: 500 Internal Server Error'],
    ['invalid-key', 'provider_auth', 'Incorrect API key provided'],
    ['rate-limit', 'rate_limited', 'last status: 429 Too Many Requests'],
    ['overloaded', 'provider_overloaded', 'last status: 503 Service Unavailable'],
  ])('ends the %s scenario failed with %s and the CLI message', async (scenario, code, words) => {
    const { chunks } = await runHarness(runner, 'codex', `hello [scenario:${scenario}]`);
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(chunks.some((chunk) => chunk.type === 'RUN_FINISHED')).toBe(false);
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_ERROR', code });
    expect(String(chunks.at(-1)?.message)).toContain(words);
  });
});
