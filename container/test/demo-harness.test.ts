import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_DEFAULTS, DEMO_OVERHEAD_EVENTS, RUNNER_RUN_STATE_HEADER, type DemoOptions } from '../../src/protocol/index.ts';
import { demoPrompt, demoScript, demoText } from '../src/harnesses/demo-script.ts';
import { json, runBody, runId, startTestRunner, stream, withoutTimestamps, type Chunk, type TestRunner } from './helpers.ts';

let runner: TestRunner;
beforeAll(async () => {
  runner = await startTestRunner();
});
afterAll(() => runner.close());

const PROMPT = 'Count these words, please — and stream them';

/** What the demo must write for these options, from the pure script, timestamps aside. */
function expected(id: string, options: Partial<DemoOptions>): Chunk[] {
  const chunks: Chunk[] = [];
  const input = { runId: id, threadId: 'thread_1', messages: [{ role: 'user' as const, content: PROMPT }] };
  for (const step of demoScript(input, { ...DEMO_DEFAULTS, ...options }, () => 0)) if (step.kind === 'chunk') chunks.push(step.chunk);
  return withoutTimestamps(chunks);
}

function textOf(chunks: readonly Chunk[], messageId: string): string {
  return chunks
    .filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT' && chunk.messageId === messageId)
    .map((chunk) => chunk.delta as string)
    .join('');
}

async function run(options: Partial<DemoOptions>) {
  const id = runId('demo');
  const body = runBody(id, { messages: [{ role: 'user', content: PROMPT }], harnessOptions: options });
  const answer = await stream(`${runner.url}/run`, 'POST', body);
  return { id, answer, ...(await answer.rest()) };
}

describe('the demo harness', () => {
  it('streams a realistic run, one chunk per line, in script order', async () => {
    const { id, answer, chunks, end } = await run({ chunks: 12, chunkBytes: 9, delayMs: 1 });
    expect(answer.headers['content-type']).toContain('application/x-ndjson');
    expect(answer.headers[RUNNER_RUN_STATE_HEADER]).toBe('running');
    expect(end).toBe('end');
    expect(withoutTimestamps(chunks)).toEqual(expected(id, { chunks: 12, chunkBytes: 9 }));
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      'RUN_STARTED',
      'REASONING_START',
      'REASONING_MESSAGE_START',
      ...Array(3).fill('REASONING_MESSAGE_CONTENT'),
      'REASONING_MESSAGE_END',
      'REASONING_END',
      'TEXT_MESSAGE_START',
      ...Array(12).fill('TEXT_MESSAGE_CONTENT'),
      'TEXT_MESSAGE_END',
      'TOOL_CALL_START',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_ARGS',
      'TOOL_CALL_END',
      'TOOL_CALL_RESULT',
      'TEXT_MESSAGE_START',
      'TEXT_MESSAGE_CONTENT',
      'TEXT_MESSAGE_END',
      'RUN_FINISHED',
    ]);
    expect(chunks[0]).toMatchObject({ runId: id, threadId: 'thread_1' });
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id, threadId: 'thread_1', metadata: { tanstack: { finishReason: 'stop' } } });
    expect(chunks.every((chunk) => typeof chunk.timestamp === 'number')).toBe(true);
  });

  it('makes every delta chunkBytes long and their concatenation computable', async () => {
    const { id, chunks } = await run({ chunks: 50, chunkBytes: 7, delayMs: 0 });
    const deltas = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT' && chunk.messageId === `${id}-text-1`);
    expect(deltas).toHaveLength(50);
    expect(deltas.every((chunk) => Buffer.byteLength(chunk.delta as string) === 7)).toBe(true);
    expect(textOf(chunks, `${id}-text-1`)).toBe(demoText(demoPrompt([{ role: 'user', content: PROMPT }]), 50, 7));
  });

  it('gives the tool call its args, parsed input and a string result', async () => {
    const { chunks } = await run({ chunks: 1, delayMs: 0 });
    const start = chunks.find((chunk) => chunk.type === 'TOOL_CALL_START')!;
    const args = chunks.filter((chunk) => chunk.type === 'TOOL_CALL_ARGS').map((chunk) => chunk.delta as string).join('');
    const end = chunks.find((chunk) => chunk.type === 'TOOL_CALL_END')!;
    const result = chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT')!;
    expect(start).toMatchObject({ toolCallName: 'count_words' });
    expect(JSON.parse(args)).toEqual((end.metadata as { tanstack: { input: unknown } }).tanstack.input);
    expect(end.toolCallId).toBe(start.toolCallId);
    expect(result.toolCallId).toBe(start.toolCallId);
    expect(typeof result.content).toBe('string');
  });

  it('streams a large fast run completely and in order', async () => {
    const { id, chunks, end } = await run({ chunks: 20_000, chunkBytes: 16, delayMs: 0 });
    expect(end).toBe('end');
    // The API bounds a demo run with this count (requireDemoWithinBudget).
    expect(chunks).toHaveLength(20_000 + DEMO_OVERHEAD_EVENTS);
    expect(textOf(chunks, `${id}-text-1`)).toBe(demoText(demoPrompt([{ role: 'user', content: PROMPT }]), 20_000, 16));
  });

  it('failAt: RUN_ERROR demo_failure replaces delta k and is the last line', async () => {
    const { id, chunks, end } = await run({ chunks: 10, failAt: 4, delayMs: 0 });
    expect(end).toBe('end');
    expect(withoutTimestamps(chunks)).toEqual(expected(id, { chunks: 10, failAt: 4 }));
    expect(chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT')).toHaveLength(4);
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'demo_failure', metadata: { tanstack: { runId: id } } });
    expect((await json(`${runner.url}/runs/${id}`)).body).toMatchObject({ state: 'finished', lastSeq: chunks.length - 1 });
  });

  it('crashAt: the process dies after deltas 0..k-1 and no terminal chunk is written', async () => {
    const { id, chunks, end } = await run({ chunks: 10, crashAt: 3, delayMs: 0 });
    expect(end).toBe('end');
    expect(withoutTimestamps(chunks)).toEqual(expected(id, { chunks: 10, crashAt: 3 }));
    // The last chunk written is delta 2, the one before the crash point.
    const lastDelta = chunks.at(-1) as { type: string; delta?: string };
    expect(lastDelta.type).toBe('TEXT_MESSAGE_CONTENT');
    expect(chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT')).toHaveLength(3);
    expect(chunks.some((chunk) => chunk.type === 'RUN_FINISHED' || chunk.type === 'RUN_ERROR')).toBe(false);
    expect((await json(`${runner.url}/runs/${id}`)).body).toMatchObject({ state: 'crashed', pid: null, lastSeq: chunks.length - 1 });
  });

  it('stallAt: no more lines after delta k-1, while keep-alive blank lines keep coming', async () => {
    const id = runId('stall');
    const answer = await stream(`${runner.url}/run`, 'POST', runBody(id, { messages: [{ role: 'user', content: PROMPT }], harnessOptions: { chunks: 10, stallAt: 5, delayMs: 0 } }));
    const before = expected(id, { chunks: 10, stallAt: 5 });
    expect(withoutTimestamps(await answer.chunks(before.length))).toEqual(before);
    let blanks = 0;
    while (blanks < 3) {
      const event = await answer.next();
      expect(event.kind).toBe('blank');
      blanks++;
    }
    expect((await json(`${runner.url}/runs/${id}`)).body).toMatchObject({ state: 'running', lastSeq: before.length - 1 });
    await json(`${runner.url}/runs/${id}/cancel`, 'POST');
    expect(await answer.rest()).toMatchObject({ chunks: [], end: 'end' });
  });

  it('ignores fault points at or past the last delta', async () => {
    const { id, chunks } = await run({ chunks: 3, failAt: 3, crashAt: 7, delayMs: 0 });
    expect(withoutTimestamps(chunks)).toEqual(expected(id, { chunks: 3 }));
    expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
  });
});
