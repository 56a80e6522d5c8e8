import { webSocket } from '@tanstack/ai-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { follow, postRun, prng, startStack, waitSettled } from './stack.ts';
import type { LocalStack } from '../../scripts/local-stack.ts';

let stack: LocalStack;

beforeAll(async () => {
  // 24 runs at once: above the default MAX_ACTIVE_RUNS (20) of one tenant.
  stack = await startStack({ vars: { MAX_ACTIVE_RUNS: '50' } });
});

afterAll(async () => {
  await stack?.close();
});

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

describe('the local stack, end to end', () => {
  it('delivers every seq exactly once to 24 concurrent clients that drop and resume at random points', async () => {
    const random = prng(20261129);
    const runs = await Promise.all(
      Array.from({ length: 24 }, (_, i) => postRun(stack.url, { prompt: `run ${i}`, harnessOptions: { chunks: 60, delayMs: 4 } })),
    );
    const results = await Promise.all(runs.map((run) => follow(stack.url, run.runId, random)));
    for (const [i, result] of results.entries()) {
      const record = result.record!;
      expect(record.status).toBe('completed');
      expect(result.seqs).toEqual(range(record.lastSeq + 1));
      expect(result.connections).toBeGreaterThan(1);
      expect(record.runId).toBe(runs[i]!.runId);
    }
  });

  it('gives a late client of a finished run the whole log and the record', async () => {
    const run = await postRun(stack.url, { prompt: 'late', harnessOptions: { chunks: 30, delayMs: 0 } });
    const settled = await waitSettled(stack.url, run.runId);
    const result = await follow(stack.url, run.runId, prng(1), 0);
    expect(result.seqs).toEqual(range(settled.lastSeq + 1));
    const { links: _links, ...record } = settled as typeof settled & { links: unknown };
    expect(result.record).toEqual(record);
  });

  it('shows ten readers of one run the identical stream', async () => {
    const run = await postRun(stack.url, { prompt: 'ten readers', harnessOptions: { chunks: 80, delayMs: 3 } });
    const results = await Promise.all(range(10).map(() => follow(stack.url, run.runId, prng(7), 0)));
    for (const result of results) expect(result.frames).toEqual(results[0]!.frames);
    expect(results[0]!.record!.status).toBe('completed');
  });

  it('paces a client that stops reading instead of dropping it: it later gets every seq once', async () => {
    const run = await postRun(stack.url, { prompt: 'big', harnessOptions: { chunks: 30_000, delayMs: 0, chunkBytes: 64 } });
    const settled = await waitSettled(stack.url, run.runId);
    const seqs: number[] = [];
    let record: unknown;
    const ws = new WebSocket(`${stack.url.replace('http', 'ws')}/runs/${run.runId}/ws`);
    const socket = () => (ws as unknown as { _socket: { pause(): void; resume(): void } })._socket;
    // Listen from the start: frames can arrive in the same read as the handshake.
    const done = new Promise<void>((resolve, reject) => {
      ws.on('message', (data) => {
        const frame = JSON.parse(String(data)) as { seq?: number; type?: string; record?: unknown };
        if (frame.type === 'status') {
          record = frame.record;
          ws.terminate();
          resolve();
        } else seqs.push(frame.seq!);
      });
      ws.on('error', reject);
    });
    await new Promise<void>((resolve) => ws.once('open', () => resolve()));
    // Stop reading at the TCP level: the object's sends back up behind us.
    socket().pause();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    socket().resume();
    await done;
    expect(seqs).toEqual(range(settled.lastSeq + 1));
    expect(record).toMatchObject({ status: 'completed', lastSeq: settled.lastSeq });
  });

  it('lets @tanstack/ai-client webSocket().joinRun() consume a run to RUN_FINISHED', async () => {
    const run = await postRun(stack.url, { prompt: 'join me', harnessOptions: { chunks: 40, delayMs: 2 } });
    const connection = webSocket(`${stack.url.replace('http', 'ws')}/runs/${run.runId}/ws`, {
      WebSocketImpl: WebSocket as unknown as typeof globalThis.WebSocket,
    });
    const types: string[] = [];
    for await (const chunk of connection.joinRun!(run.runId)) types.push(chunk.type);
    expect(types[0]).toBe('RUN_STARTED');
    expect(types).toContain('RUN_FINISHED');
    // 40 deltas of the main message, and the demo's closing sentence.
    expect(types.filter((t) => t === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThanOrEqual(40);
  });
});
