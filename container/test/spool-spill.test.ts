import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, json, runBody, runId, startTestRunner, stream, type TestRunner } from './helpers.ts';

/** A runner whose spools spill after 1 KiB: reattach must be exact from disk, and an expired run leaves no file. */
let runner: TestRunner;
let spoolParent: string;
beforeAll(async () => {
  spoolParent = mkdtempSync(join(tmpdir(), 'spool-spill-test-'));
  runner = await startTestRunner({ config: { spoolMemoryBytes: 1024, spoolDir: spoolParent } });
});
afterAll(async () => {
  await runner.close();
  expect(readdirSync(spoolParent)).toEqual([]);
  rmSync(spoolParent, { recursive: true, force: true });
});

function spoolFiles(): string[] {
  return readdirSync(spoolParent).flatMap((dir) => readdirSync(join(spoolParent, dir)));
}

describe('a spool on disk', () => {
  it('replays exactly the lines after fromSeq, from segment files, once the run ended', async () => {
    const id = runId('spilled');
    const { chunks } = await (await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 120, chunkBytes: 300, delayMs: 0 } }))).rest();
    expect(spoolFiles().length).toBeGreaterThan(5);
    for (const fromSeq of [-1, 0, 3, 50, 77, chunks.length - 2, chunks.length - 1]) {
      expect((await (await stream(`${runner.url}/runs/${id}/stream?fromSeq=${fromSeq}`)).rest()).chunks).toEqual(chunks.slice(fromSeq + 1));
    }
  });

  it('serves a late reader of a live run from disk, then live, with no gap', async () => {
    const id = runId('live');
    const original = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 100, chunkBytes: 200, delayMs: 3 } }));
    const head = await original.chunks(40);
    const late = await stream(`${runner.url}/runs/${id}/stream?fromSeq=5`);
    const all = [...head, ...(await original.rest()).chunks];
    expect((await late.rest()).chunks).toEqual(all.slice(6));
  });

  it('deletes an ended run’s files once its reattach window is over', async () => {
    const brief = await startTestRunner({ config: { spoolMemoryBytes: 1024, spoolDir: spoolParent, spoolTtlMs: 50 } });
    try {
      const id = runId('expiring');
      const before = spoolFiles().length;
      await (await stream(`${brief.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 50, chunkBytes: 300, delayMs: 0 } }))).rest();
      await eventually(async () => (await json(`${brief.url}/runs/${id}`)).status === 404, 'the run to expire');
      await eventually(() => spoolFiles().length === before, 'its spool files to be deleted');
    } finally {
      await brief.close();
    }
  });
});
