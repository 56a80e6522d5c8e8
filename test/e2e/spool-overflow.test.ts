import { createServer, request as httpRequest, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../scripts/local-stack.ts';
import { newRunnerToken } from '../../scripts/private-env.ts';
import { startRunner, type RunningRunner } from '../../container/src/server.ts';
import { getRun, postRun, startStack, waitSettled } from './stack.ts';

/**
 * A spool overflow, end to end: the Worker reads its run through a proxy that
 * stops passing the stream on, so the runner's reader falls behind a small
 * RUNNER_SPOOL_MAX_BYTES; the proxy then cuts the connection, and the relay's
 * reattach finds its next line gone (410 spool_truncated). The proxy can also
 * refuse the runner's cancel route, as a runner the Worker cannot reach would,
 * which leaves a failed run's harness running until a later cancel.
 */
const RUNNER_TOKEN = newRunnerToken();
/** 8 KiB deltas 2 ms apart: a run of about 40 s, far past the spool's 64 KiB within a second or two. */
const HARNESS_OPTIONS = { chunks: 5_000, chunkBytes: 8_192, delayMs: 2 };

interface Proxy {
  url: string;
  /** Whether `POST /runs/:id/cancel` is answered 503 without reaching the runner. */
  refuseCancel: boolean;
  /** Cuts the held run streams (the Worker sees its connection drop). */
  cutHeld(): void;
  close(): Promise<void>;
}

/** Passes everything to the runner, except that a `POST /run` stream is held after its first bytes. */
async function startProxy(target: string): Promise<Proxy> {
  const held = new Set<ServerResponse>();
  const proxy: Proxy = { url: '', refuseCancel: false, cutHeld: () => {}, close: async () => {} };
  const server: Server = createServer((req, res) => {
    if (proxy.refuseCancel && req.url?.endsWith('/cancel')) {
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'unavailable', message: 'refused by the test proxy' } }));
      req.resume();
      return;
    }
    const upstream = httpRequest(`${target}${req.url}`, { method: req.method, headers: req.headers }, (upRes) => {
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      if (req.method !== 'POST' || req.url !== '/run') return void upRes.pipe(res);
      held.add(res);
      res.once('close', () => upRes.destroy());
      // The first data passes (RUN_STARTED and a few deltas), then nothing: the runner's reader stalls on backpressure.
      upRes.once('data', (data: Buffer) => {
        res.write(data);
        upRes.pause();
      });
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.cutHeld = () => {
    for (const res of held) res.destroy();
    held.clear();
  };
  proxy.close = () =>
    new Promise<void>((resolve) => {
      proxy.cutHeld();
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return proxy;
}

let runner: RunningRunner;
let proxy: Proxy;
let stack: LocalStack;

beforeAll(async () => {
  runner = await startRunner({
    port: 0,
    host: '127.0.0.1',
    env: { ...process.env, RUNNER_TOKEN, RUNNER_SPOOL_MAX_BYTES: String(64 * 1024), RUNNER_SPOOL_MEMORY_BYTES: String(16 * 1024) },
    log: () => {},
  });
  proxy = await startProxy(runner.url);
  stack = await startStack({ runnerUrl: proxy.url, runnerToken: RUNNER_TOKEN });
});

afterAll(async () => {
  await stack?.close();
  await proxy?.close();
  await runner?.close();
});

interface RunnerStatus {
  state: string;
  lastSeq: number;
  pid: number | null;
}

async function runnerStatus(runId: string): Promise<RunnerStatus> {
  const res = await fetch(`${runner.url}/runs/${runId}`, { headers: { authorization: `Bearer ${RUNNER_TOKEN}` } });
  return (await res.json()) as RunnerStatus;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 3_000; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`still waiting for: ${what}`);
}

/** Starts a run, lets the runner get far past what the Worker has read, then cuts the Worker's stream. */
async function overflowedRun(): Promise<string> {
  const { runId } = await postRun(stack.url, { prompt: 'overflow', harnessOptions: HARNESS_OPTIONS });
  // 64 lines of 8 KiB are the whole 64 KiB spool; 400 lines past the start leave the Worker's cursor far behind it.
  await until('the runner to be far ahead of the Worker', async () => (await runnerStatus(runId)).lastSeq > 400);
  proxy.cutHeld();
  return runId;
}

describe('spool overflow, end to end', () => {
  it('fails the run with spool_truncated and kills its harness', async () => {
    const runId = await overflowedRun();
    const settled = await waitSettled(stack.url, runId);
    expect(settled.status).toBe('failed');
    expect(settled.error?.message).toMatch(/spool_truncated|RUNNER_SPOOL_MAX_BYTES/);
    await until('the harness to be stopped', async () => (await runnerStatus(runId)).pid === null);
    // Cancelled by the relay, not finished on its own: the harness had thousands of deltas left.
    expect((await runnerStatus(runId)).state).toBe('cancelled');
  });

  it('kills, on a later cancel, a failed run’s harness that the failure could not stop', async () => {
    proxy.refuseCancel = true;
    const runId = await overflowedRun();
    expect((await waitSettled(stack.url, runId)).status).toBe('failed');
    const before = await runnerStatus(runId);
    expect(before.state).toBe('running');
    expect(before.pid).not.toBeNull();

    proxy.refuseCancel = false;
    const cancel = await fetch(`${stack.url}/runs/${runId}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(200);
    expect((await getRun(stack.url, runId)).status).toBe('failed');
    await until('the harness to be stopped', async () => (await runnerStatus(runId)).pid === null);
    expect((await runnerStatus(runId)).state).toBe('cancelled');
  });
});
