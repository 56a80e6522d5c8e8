import { describe, expect, it } from 'vitest';
import { RUNNER_RUN_STATE_HEADER, type RunnerRunRequest } from '../../src/protocol/index.ts';
import { Driver, type Batch, type ReadEnd, type ReadPlan } from '../../src/run/driver.ts';
import type { RunnerTransport } from '../../src/runner/transport.ts';

const line = (i: number) => JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `d${i}` });
const FINISHED = JSON.stringify({ type: 'RUN_FINISHED', runId: 'r', threadId: 't', finishReason: 'stop' });

function ndjson(lines: string[], state?: string): Response {
  return new Response(lines.map((l) => `${l}\n`).join(''), { headers: state ? { [RUNNER_RUN_STATE_HEADER]: state } : {} });
}

/** A runner double: each call answers the next scripted response, and is recorded. */
function scripted(answers: { start?: Response[]; reattach?: Response[] }) {
  const calls: string[] = [];
  const transport: RunnerTransport = {
    async start() {
      calls.push('start');
      return answers.start?.shift() ?? new Response(null, { status: 500 });
    },
    async reattach(_runId, fromSeq) {
      calls.push(`reattach ${fromSeq}`);
      return answers.reattach?.shift() ?? new Response(null, { status: 404 });
    },
    async cancel() {
      calls.push('cancel');
      return new Response(null);
    },
    async toolResult() {
      calls.push('tool-result');
      return Response.json({ delivered: true });
    },
  };
  return { transport, calls };
}

const REQUEST: RunnerRunRequest = { runId: 'r', threadId: 't', messages: [{ role: 'user', content: 'hi' }], harness: 'demo' } as RunnerRunRequest;

/** Pulls every batch as the lifecycle does, advancing the durable cursor by what it applied. */
async function drain(driver: Driver, mode: ReadPlan['mode'], lastSeq = -1): Promise<{ batches: Batch[]; end: ReadEnd }> {
  let cursor = lastSeq;
  const batches: Batch[] = [];
  const reads = driver.read({
    runId: 'r',
    threadId: 't',
    mode,
    request: async () => REQUEST,
    lastSeq: () => cursor,
    watched: () => true,
    signal: new AbortController().signal,
  });
  for (;;) {
    const next = await reads.next();
    if (next.done) return { batches, end: next.value };
    batches.push(next.value);
    cursor += next.value.chunks.length;
  }
}

describe('the driver only reads: runner stream in, batches out', () => {
  it('hands on the chunks in order and marks the batch that ends the run', async () => {
    const { transport, calls } = scripted({ start: [ndjson([line(0), line(1), FINISHED, line(9)])] });
    const { batches, end } = await drain(new Driver(transport), 'start');
    expect(end).toBe('terminal');
    expect(batches.flatMap((b) => b.chunks.map((c) => c.raw))).toEqual([line(0), line(1), FINISHED]);
    expect(batches.at(-1)!.terminal).toBe(true);
    expect(batches.slice(0, -1).every((b) => !b.terminal)).toBe(true);
    expect(calls).toEqual(['start']);
  });

  it('ends a run at once when the runner said its harness had already ended and the stream has no terminal chunk', async () => {
    const { transport, calls } = scripted({ reattach: [ndjson([line(3), line(4)], 'crashed')] });
    const { batches, end } = await drain(new Driver(transport), 'reattach', 2);
    expect(end).toBe('terminal');
    expect(batches.flatMap((b) => b.chunks.map((c) => c.raw)).slice(0, 2)).toEqual([line(3), line(4)]);
    expect(batches.at(-1)).toMatchObject({ terminal: true, chunks: [{ chunk: { type: 'RUN_ERROR', code: 'runner_lost' } }] });
    // No second reattach to learn what the header already said.
    expect(calls).toEqual(['reattach 2']);
  });

  it('reattaches after a stream that ended while the harness was running (a dropped connection)', async () => {
    const { transport, calls } = scripted({ start: [ndjson([line(0)], 'running')], reattach: [ndjson([line(1), FINISHED], 'finished')] });
    const { batches, end } = await drain(new Driver(transport), 'start');
    expect(end).toBe('terminal');
    expect(batches.flatMap((b) => b.chunks.map((c) => c.raw))).toEqual([line(0), line(1), FINISHED]);
    expect(calls).toEqual(['start', 'reattach 0']);
  });

  it('asks for a retry when a reattach finds the runner restarting, and turns a refused start into a terminal RUN_ERROR', async () => {
    const restarting = scripted({ reattach: [new Response('restarting', { status: 503 })] });
    expect(await drain(new Driver(restarting.transport), 'reattach', 4)).toEqual({ batches: [], end: 'retry' });
    const refused = scripted({ start: [new Response('no healthy upstream', { status: 503 })] });
    const { batches, end } = await drain(new Driver(refused.transport), 'start');
    expect(end).toBe('terminal');
    expect(batches).toMatchObject([{ terminal: true, chunks: [{ chunk: { type: 'RUN_ERROR', code: 'runner_unavailable' } }] }]);
    expect(refused.calls).toEqual(['start']);
  });
});
