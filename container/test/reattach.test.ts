import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNNER_RUN_STATE_HEADER } from '../../src/protocol/index.ts';
import { cleanEnv, eventually, json, runBody, runId, startTestRunner, stream, type Chunk, type TestRunner } from './helpers.ts';

let runner: TestRunner;
beforeAll(async () => {
  runner = await startTestRunner();
});
afterAll(() => runner.close());

async function finishedRun(options: Record<string, number>): Promise<{ id: string; chunks: Chunk[] }> {
  const id = runId('done');
  const { chunks } = await (await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { delayMs: 0, ...options } }))).rest();
  return { id, chunks };
}

describe('GET /runs/:runId/stream', () => {
  it('replays exactly the lines after fromSeq once the run has ended', async () => {
    const { id, chunks } = await finishedRun({ chunks: 20 });
    for (const fromSeq of [-1, 0, 7, chunks.length - 2, chunks.length - 1, chunks.length + 5]) {
      const reattached = await stream(`${runner.url}/runs/${id}/stream?fromSeq=${fromSeq}`);
      expect(reattached.headers[RUNNER_RUN_STATE_HEADER]).toBe('finished');
      expect(await reattached.rest()).toEqual({ chunks: chunks.slice(fromSeq + 1), blanks: 0, end: 'end' });
    }
  });

  it('treats a missing fromSeq as -1', async () => {
    const { id, chunks } = await finishedRun({ chunks: 2 });
    expect((await (await stream(`${runner.url}/runs/${id}/stream`)).rest()).chunks).toEqual(chunks);
  });

  it('serves the backlog then the live tail of a running run, with no gap and no duplicate', async () => {
    const id = runId('live');
    const original = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 150, delayMs: 5 } }));
    const head = await original.chunks(6);
    const reattached = await stream(`${runner.url}/runs/${id}/stream?fromSeq=3`);
    expect(reattached.headers[RUNNER_RUN_STATE_HEADER]).toBe('running');
    const all = [...head, ...(await original.rest()).chunks];
    const tail = await reattached.rest();
    expect(tail.end).toBe('end');
    expect(tail.chunks).toEqual(all.slice(4));
    expect(all.at(-1)?.type).toBe('RUN_FINISHED');
  });

  it('keeps a run going when its first reader leaves, for a later reattach', async () => {
    const id = runId('left');
    const original = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 40, delayMs: 2 } }));
    const head = await original.chunks(3);
    original.close();
    const rest = await (await stream(`${runner.url}/runs/${id}/stream?fromSeq=2`)).rest();
    expect(rest.end).toBe('end');
    expect(rest.chunks.at(-1)?.type).toBe('RUN_FINISHED');
    expect(head.length + rest.chunks.length).toBe(40 + 19);
  });

  it('gives several readers of one run the same lines', async () => {
    const id = runId('fanout');
    const first = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 60, delayMs: 2 } }));
    const others = await Promise.all([0, 1, 2].map(() => stream(`${runner.url}/runs/${id}/stream?fromSeq=-1`)));
    const results = await Promise.all([first, ...others].map((reader) => reader.rest()));
    for (const result of results.slice(1)) expect(result.chunks).toEqual(results[0]!.chunks);
  });

  it('replays the partial lines of a crashed run and ends without a terminal chunk', async () => {
    const { id, chunks } = await finishedRun({ chunks: 8, crashAt: 5 });
    const reattached = await stream(`${runner.url}/runs/${id}/stream?fromSeq=2`);
    expect(reattached.headers[RUNNER_RUN_STATE_HEADER]).toBe('crashed');
    expect(await reattached.rest()).toEqual({ chunks: chunks.slice(3), blanks: 0, end: 'end' });
  });

  it('sends keep-alive blank lines on a reattached stream while the harness is quiet', async () => {
    const id = runId('quiet');
    const original = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 4, stallAt: 2, delayMs: 0 } }));
    const lines = await original.chunks(11);
    const reattached = await stream(`${runner.url}/runs/${id}/stream?fromSeq=${lines.length - 1}`);
    for (let blanks = 0; blanks < 2; blanks++) expect((await reattached.next()).kind).toBe('blank');
    await json(`${runner.url}/runs/${id}/cancel`, 'POST');
    expect((await reattached.rest()).chunks).toEqual([]);
  });
});

describe('retention', () => {
  it('forgets the oldest finished runs past RUNNER_SPOOL_MAX_RUNS', async () => {
    const small = await startTestRunner({ config: { maxFinishedRuns: 2 } });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = runId('kept');
        ids.push(id);
        await (await stream(`${small.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 1, delayMs: 0 } }))).rest();
      }
      expect((await json(`${small.url}/runs/${ids[0]}/stream`)).status).toBe(404);
      expect((await json(`${small.url}/runs/${ids[1]}`)).status).toBe(200);
      expect((await json(`${small.url}/runs/${ids[2]}`)).status).toBe(200);
    } finally {
      await small.close();
    }
  });

  it('forgets a finished run after RUNNER_SPOOL_TTL_MS', async () => {
    const brief = await startTestRunner({ env: cleanEnv({ RUNNER_SPOOL_TTL_MS: '30' }) });
    try {
      const id = runId('ttl');
      await (await stream(`${brief.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 1, delayMs: 0 } }))).rest();
      await eventually(async () => (await json(`${brief.url}/runs/${id}`)).status === 404, 'the run to expire');
    } finally {
      await brief.close();
    }
  });

  it('answers 410 for lines dropped past RUNNER_SPOOL_MAX_BYTES, and serves the rest', async () => {
    const tight = await startTestRunner({ config: { maxSpoolBytes: 4096 } });
    try {
      const id = runId('tight');
      const { chunks } = await (await stream(`${tight.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 200, delayMs: 0 } }))).rest();
      expect(chunks).toHaveLength(219);
      const gone = await json(`${tight.url}/runs/${id}/stream?fromSeq=-1`);
      expect(gone.status).toBe(410);
      expect((gone.body as { error: { code: string } }).error.code).toBe('spool_truncated');
      const tail = await stream(`${tight.url}/runs/${id}/stream?fromSeq=210`);
      expect((await tail.rest()).chunks).toEqual(chunks.slice(211));
    } finally {
      await tight.close();
    }
  });
});
