import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, eventually, json, runBody, runId, TEST_RUNNER_TOKEN } from './helpers.ts';

/**
 * The runner's memory does not grow with the number or size of runs: 20 runs
 * of about 50 MB each, one after another and then 5 at a time, read to the
 * end. The runner is its own process, so its peak RSS (VmHWM) is measured
 * alone; its spools go to a directory of this test's, so we can see them go.
 */
const RSS_BOUND_BYTES = 300 * 1024 * 1024;
const RUN_BYTES = 50_000_000;
const CHUNK_BYTES = 64 * 1024;
const DELTAS = Math.ceil(RUN_BYTES / CHUNK_BYTES);
const RUNS = 20;
const CONCURRENCY = 5;
/** The reattach window under test: short, so the test sees finished spools go. */
const SPOOL_TTL_MS = 500;

let child: ChildProcess;
let url: string;
let spoolParent: string;

function procStatus(field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no ${field} in /proc/${child.pid}/status`);
  return Number(match[1]) * 1024;
}

/** Reads a run's stream to its end without keeping it: its size, line count and last line. */
function readRun(id: string): Promise<{ bytes: number; lines: number; last: string }> {
  const body = JSON.stringify(runBody(id, { harnessOptions: { chunks: DELTAS, chunkBytes: CHUNK_BYTES, delayMs: 0 } }));
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}/run`, { method: 'POST', headers: { authorization: `Bearer ${TEST_RUNNER_TOKEN}`, 'content-type': 'application/json' } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`POST /run answered ${res.statusCode}`));
      let bytes = 0;
      let lines = 0;
      let tail = Buffer.alloc(0);
      res.on('data', (data: Buffer) => {
        bytes += data.length;
        for (let i = data.indexOf(10); i !== -1; i = data.indexOf(10, i + 1)) lines++;
        tail = Buffer.concat([tail, data]).subarray(-512);
      });
      res.on('end', () => resolve({ bytes, lines, last: tail.toString('utf8').trimEnd().split('\n').at(-1) ?? '' }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

function runnerSpoolFiles(): string[] {
  return readdirSync(spoolParent).flatMap((dir) => readdirSync(join(spoolParent, dir)));
}

beforeAll(async () => {
  spoolParent = mkdtempSync(join(tmpdir(), 'runner-memory-test-'));
  child = spawn(process.execPath, ['container/src/main.ts'], {
    env: cleanEnv({ RUNNER_TOKEN: TEST_RUNNER_TOKEN, RUNNER_PORT: '0', RUNNER_SPOOL_DIR: spoolParent, RUNNER_SPOOL_TTL_MS: String(SPOOL_TTL_MS) }),
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (data: string) => {
      out += data;
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (match !== null) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`runner exited with ${code}: ${out}`)));
  });
});

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
  rmSync(spoolParent, { recursive: true, force: true });
});

describe('runner memory', () => {
  const ids: string[] = [];
  const peaks: number[] = [];

  async function runAll(concurrency: number): Promise<void> {
    const batch = Array.from({ length: RUNS }, () => runId('mem'));
    ids.push(...batch);
    for (let i = 0; i < batch.length; i += concurrency) {
      const results = await Promise.all(batch.slice(i, i + concurrency).map(readRun));
      for (const result of results) {
        expect(result.bytes).toBeGreaterThan(RUN_BYTES);
        expect(result.lines).toBe(DELTAS + 19);
        expect(JSON.parse(result.last)).toMatchObject({ type: 'RUN_FINISHED' });
      }
    }
    peaks.push(procStatus('VmHWM'));
  }

  it(`stays under ${RSS_BOUND_BYTES / 2 ** 20} MiB of RSS over ${RUNS} runs of ${RUN_BYTES / 1e6} MB, one at a time`, async () => {
    await runAll(1);
    console.log(`runner peak RSS after ${RUNS} sequential runs: ${(peaks[0]! / 2 ** 20).toFixed(0)} MiB`);
    expect(peaks[0]).toBeLessThan(RSS_BOUND_BYTES);
  }, 120_000);

  it(`stays under the same bound with ${CONCURRENCY} runs at a time`, async () => {
    await runAll(CONCURRENCY);
    console.log(`runner peak RSS after ${RUNS} runs ${CONCURRENCY} at a time: ${(peaks[1]! / 2 ** 20).toFixed(0)} MiB (now ${(procStatus('VmRSS') / 2 ** 20).toFixed(0)} MiB)`);
    expect(peaks[1]).toBeLessThan(RSS_BOUND_BYTES);
  }, 120_000);

  it('forgets every finished run, in memory and on disk, after the reattach window', async () => {
    await eventually(() => runnerSpoolFiles().length === 0, 'every spool file to be deleted');
    for (const id of ids) expect((await json(`${url}/runs/${id}`)).status).toBe(404);
  });
});
