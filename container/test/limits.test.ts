import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnerRunStatus } from '../../src/protocol/index.ts';
import { eventually, json, runBody, runId, startTestRunner, stream, type TestRunner } from './helpers.ts';

let runner: TestRunner;
beforeAll(async () => {
  runner = await startTestRunner({ config: { maxLineBytes: 4096 } });
});
afterAll(() => runner.close());

describe('a chunk over RUNNER_MAX_LINE_BYTES', () => {
  it('ends the run with a chunk_too_large RUN_ERROR and stops the harness', async () => {
    const id = runId('huge');
    const { chunks, end } = await (await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 3, chunkBytes: 8000, delayMs: 0 } }))).rest();
    expect(end).toBe('end');
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'chunk_too_large', runId: id });
    expect(chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT')).toHaveLength(0);
    const status = async () => (await json(`${runner.url}/runs/${id}`)).body as RunnerRunStatus;
    expect((await status()).state).toBe('finished');
    await eventually(async () => (await status()).pid === null, 'the harness process to be stopped');
  });
});
