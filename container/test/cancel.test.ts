import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnerRunStatus } from '../../src/protocol/index.ts';
import { isAlive, json, runBody, runId, startTestRunner, stream, type TestRunner } from './helpers.ts';

let runner: TestRunner;
beforeAll(async () => {
  runner = await startTestRunner();
});
afterAll(() => runner.close());

async function status(id: string): Promise<RunnerRunStatus> {
  return (await json(`${runner.url}/runs/${id}`)).body as RunnerRunStatus;
}

describe('POST /runs/:runId/cancel', () => {
  it('kills the harness process and ends every open stream with no further line', async () => {
    const id = runId('cancel');
    const original = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 100, stallAt: 50, delayMs: 0 } }));
    const head = await original.chunks(20);
    const reattached = await stream(`${runner.url}/runs/${id}/stream?fromSeq=19`);
    const { pid } = await status(id);
    expect(pid).toBeTypeOf('number');
    expect(isAlive(pid!)).toBe(true);

    const answer = await json(`${runner.url}/runs/${id}/cancel`, 'POST');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ runId: id, state: 'cancelled', pid: null });
    expect(isAlive(pid!)).toBe(false);

    const rest = await original.rest();
    expect(rest.end).toBe('end');
    const all = [...head, ...rest.chunks];
    expect(all.some((chunk) => chunk.type === 'RUN_FINISHED' || chunk.type === 'RUN_ERROR')).toBe(false);
    const lastSeq = (answer.body as RunnerRunStatus).lastSeq;
    expect(all).toHaveLength(lastSeq + 1);
    const tail = await reattached.rest();
    expect(tail.end).toBe('end');
    expect(tail.chunks).toEqual(all.slice(20));
  });

  it('is idempotent, and a reattach afterwards replays the lines and ends', async () => {
    const id = runId('twice');
    const original = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 10, stallAt: 3, delayMs: 0 } }));
    const head = await original.chunks(12);
    const first = await json(`${runner.url}/runs/${id}/cancel`, 'POST');
    const second = await json(`${runner.url}/runs/${id}/cancel`, 'POST');
    expect(second.status).toBe(200);
    expect(second.body).toEqual(first.body);
    expect(await original.rest()).toMatchObject({ chunks: [], end: 'end' });
    expect(await (await stream(`${runner.url}/runs/${id}/stream?fromSeq=-1`)).rest()).toEqual({ chunks: head, blanks: 0, end: 'end' });
  });

  it('leaves a finished run as it was', async () => {
    const id = runId('finished');
    await (await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 2, delayMs: 0 } }))).rest();
    const answer = await json(`${runner.url}/runs/${id}/cancel`, 'POST');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ state: 'finished' });
  });

  it('stops a run that nobody is reading', async () => {
    const id = runId('unread');
    const original = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 10, stallAt: 1, delayMs: 0 } }));
    await original.chunks(10);
    original.close();
    const { pid } = await status(id);
    expect((await json(`${runner.url}/runs/${id}/cancel`, 'POST')).body).toMatchObject({ state: 'cancelled' });
    expect(isAlive(pid!)).toBe(false);
  });
});

describe('runner shutdown', () => {
  it('kills every harness process and cuts open streams', async () => {
    const own = await startTestRunner();
    const id = runId('shutdown');
    const original = await stream(`${own.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 10, stallAt: 2, delayMs: 0 } }));
    await original.chunks(11);
    const { pid } = (await json(`${own.url}/runs/${id}`)).body as RunnerRunStatus;
    await own.close();
    expect(isAlive(pid!)).toBe(false);
    expect((await original.rest()).end).toBe('cut');
  });
});
