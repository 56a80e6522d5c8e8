import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnerRunStatus } from '../../src/protocol/index.ts';
import { eventually, isAlive, json, runBody, runId, startCliRunner, stream, type Chunk, type CliRunner } from './helpers.ts';

/** Looks like a real key so that a leak would be obvious; it authenticates nothing. */
const DUMMY_KEY = 'sk-ant-api03-dummy-test-key-0123456789abcdef';

let runner: CliRunner;
beforeAll(async () => {
  runner = await startCliRunner('claude-test', { ANTHROPIC_API_KEY: DUMMY_KEY });
});
afterAll(() => runner.close());

function claudeRun(id: string, prompt: string): Record<string, unknown> {
  return runBody(id, { harness: 'claude-code', messages: [{ role: 'user', content: prompt }] });
}

function expectNoKey(chunks: readonly Chunk[], logs: readonly string[]): void {
  expect(JSON.stringify(chunks)).not.toContain(DUMMY_KEY);
  expect(logs.join('\n')).not.toContain(DUMMY_KEY);
}

describe('the claude-code harness (fake claude CLI on PATH)', () => {
  it('is listed by /health once the CLI and the key are there', async () => {
    expect((await json(`${runner.url}/health`)).body).toMatchObject({ ok: true, harnesses: ['demo', 'claude-code', 'chat'] });
  });

  it('streams the CLI run as AG-UI chunks and never leaks the key', async () => {
    const id = runId('claude');
    const { chunks, end } = await (await stream(`${runner.url}/run`, 'POST', claudeRun(id, 'list the files'))).rest();
    expect(end).toBe('end');
    const core = chunks.filter((chunk) => chunk.type !== 'CUSTOM' || chunk.name === 'claude-code.session-id');
    expect(core.map((chunk) => chunk.type)).toEqual([
      'RUN_STARTED',
      'CUSTOM',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_CONTENT',
      // The "s" that ends "files" could start the key ("sk-…"): streaming redaction holds it until the message ends.
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'RUN_FINISHED',
    ]);
    expect(chunks[0]).toMatchObject({ type: 'RUN_STARTED', runId: id, threadId: 'thread_1' });
    const text = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT').map((chunk) => chunk.delta).join('');
    expect(text).toBe('You said: list the files');
    expect(chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT').map((chunk) => chunk.delta)).toEqual(['You said: ', 'list the file', 's']);
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_START')).toMatchObject({ toolCallId: 'toolu_fake_1', toolCallName: 'Bash' });
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_END')).toMatchObject({ metadata: { tanstack: { input: { command: 'printenv ANTHROPIC_API_KEY' } } } });
    // The fake CLI prints the key as its tool result: it must arrive scrubbed.
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: 'toolu_fake_1', content: '[redacted]\n' });
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id, metadata: { tanstack: { finishReason: 'stop' } } });
    expectNoKey(chunks, runner.logs);
    expect((await json(`${runner.url}/runs/${id}`)).body).toMatchObject({ state: 'finished', lastSeq: chunks.length - 1 });
  });

  it('ends a failing CLI run with RUN_ERROR whose message carries no key', async () => {
    const id = runId('claude_fail');
    const { chunks } = await (await stream(`${runner.url}/run`, 'POST', claudeRun(id, 'MODE:fail'))).rest();
    const last = chunks.at(-1)!;
    expect(last.type).toBe('RUN_ERROR');
    expect(String(last.message)).toContain('exited with code 1');
    expect(String(last.message)).toContain('[redacted]');
    expectNoKey(chunks, runner.logs);
  });

  it('cancel kills the CLI the harness started, not only the harness process', async () => {
    const id = runId('claude_hang');
    const original = await stream(`${runner.url}/run`, 'POST', claudeRun(id, 'MODE:hang'));
    const [started, session] = await original.chunks(2);
    expect(started?.type).toBe('RUN_STARTED');
    const cliPid = Number(String((session?.value as { sessionId: string }).sessionId).replace('fake-session-', ''));
    expect(isAlive(cliPid)).toBe(true);
    const { pid } = (await json(`${runner.url}/runs/${id}`)).body as RunnerRunStatus;

    expect((await json(`${runner.url}/runs/${id}/cancel`, 'POST')).body).toMatchObject({ state: 'cancelled' });
    expect(isAlive(pid!)).toBe(false);
    await eventually(() => !isAlive(cliPid), 'the fake claude process to die');
    expect(await original.rest()).toMatchObject({ end: 'end' });
  });
});
