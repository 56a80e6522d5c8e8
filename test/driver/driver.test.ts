import type { StreamChunk } from '@tanstack/ai';
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, inject, it } from 'vitest';
import { isStatusFrame } from '../../src/protocol/index.ts';
import { createRun, openTail, range, runStub, settled, type Tail } from '../workers/helpers.ts';

function chunks(tail: Tail): StreamChunk[] {
  return tail.frames.flatMap((f) => ('chunk' in f ? [f.chunk] : []));
}

/** What the runner produced for the run, from its spool: the ground truth the log must equal. */
async function runnerLines(runId: string): Promise<StreamChunk[]> {
  const res = await fetch(`${inject('runnerUrl')}/runs/${runId}/stream?fromSeq=-1`, { headers: { authorization: `Bearer ${inject('runnerToken')}` } });
  const text = await res.text();
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as StreamChunk);
}

describe('driving the real runner', () => {
  it('executes a posted run and streams every chunk, in order, to a WebSocket tail', async () => {
    const { res, json } = await createRun({ prompt: 'build a thing', harnessOptions: { chunks: 30, delayMs: 0 } });
    expect(res.status).toBe(202);
    const tail = await openTail(json.runId);
    const close = await tail.closed;
    expect(close.code).toBe(1000);
    const final = tail.frames.at(-1)!;
    expect(isStatusFrame(final) && final.record.status).toBe('completed');
    const seen = chunks(tail);
    expect(tail.seqs()).toEqual(range(0, seen.length - 1));
    expect(seen[0]!.type).toBe('RUN_STARTED');
    expect(seen.at(-1)!.type).toBe('RUN_FINISHED');
    expect(seen.filter((c) => c.type === 'TEXT_MESSAGE_CONTENT').length).toBeGreaterThanOrEqual(30);
    expect(seen.some((c) => c.type === 'TOOL_CALL_START')).toBe(true);
    expect(seen).toEqual(await runnerLines(json.runId));
  });

  it('finishes a run nobody watches', async () => {
    const { json } = await createRun({ prompt: 'unwatched', harnessOptions: { chunks: 20, delayMs: 1 } });
    const done = await settled(json.runId);
    expect(done.status).toBe('completed');
    expect(done.lastSeq).toBe((await runnerLines(json.runId)).length - 1);
  });

  it('groups a fast run into few rows: storage is billed per row written', async () => {
    const { json } = await createRun({ prompt: 'bulk', harnessOptions: { chunks: 5_000, delayMs: 0 } });
    const done = await settled(json.runId);
    expect(done.status).toBe('completed');
    await runInDurableObject(runStub(json.runId), (_object, state) => {
      const rows = state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM events').one().n;
      expect(rows).toBeLessThan((done.lastSeq + 1) / 50);
    });
  });

  it('fails with the harness error on failAt', async () => {
    const { json } = await createRun({ prompt: 'fail', harnessOptions: { chunks: 20, delayMs: 0, failAt: 5 } });
    const done = await settled(json.runId);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('demo_failure');
    const tail = await openTail(json.runId);
    await tail.closed;
    expect(chunks(tail).at(-1)!.type).toBe('RUN_ERROR');
  });

  it('fails with runner_lost when the harness dies without a terminal chunk (crashAt)', async () => {
    const { json } = await createRun({ prompt: 'crash', harnessOptions: { chunks: 20, delayMs: 0, crashAt: 7 } });
    const done = await settled(json.runId);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('runner_lost');
    const tail = await openTail(json.runId);
    await tail.closed;
    const seen = chunks(tail);
    // Everything the harness wrote is kept, then the relay says why the run ended.
    expect(seen.slice(0, -1)).toEqual(await runnerLines(json.runId));
    expect(seen.at(-1)).toMatchObject({ type: 'RUN_ERROR', code: 'runner_lost' });
  });

  it.each([
    ['fault:unavailable', 'runner_unavailable'],
    ['fault:500', 'runner_error'],
    ['fault:oversized', 'chunk_too_large'],
  ])('turns %s into a RUN_ERROR with code %s', async (model, code) => {
    const { json } = await createRun({ prompt: 'faulty', model });
    const done = await settled(json.runId);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe(code);
    const tail = await openTail(json.runId);
    await tail.closed;
    expect(chunks(tail).at(-1)).toMatchObject({ type: 'RUN_ERROR', code });
    expect(chunks(tail).every((c) => JSON.stringify(c).length < 1_000_000)).toBe(true);
  });

  it('skips a non-JSON banner line and keeps every chunk', async () => {
    const { json } = await createRun({ prompt: 'banner', model: 'fault:banner', harnessOptions: { chunks: 10, delayMs: 0 } });
    const done = await settled(json.runId);
    expect(done.status).toBe('completed');
    expect(done.lastSeq).toBe((await runnerLines(json.runId)).length - 1);
  });

  it('fails a silent runner as stalled after STALL_TIMEOUT_SECONDS', { timeout: 30_000 }, async () => {
    const { json } = await createRun({ prompt: 'stall', harnessOptions: { chunks: 20, delayMs: 0, stallAt: 3 } });
    const done = await settled(json.runId);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('stalled');
  });

  it('reattaches from lastSeq after the object is reset mid-run, losing and repeating nothing', async () => {
    const { json } = await createRun({ prompt: 'survive a deploy', harnessOptions: { chunks: 120, delayMs: 5 } });
    const first = await openTail(json.runId);
    await first.until(() => first.seqs().length >= 20);
    await abortAllDurableObjects();
    await first.closed;
    // The alarm is the object's next wake; it reattaches to the runner's spool.
    await runDurableObjectAlarm(runStub(json.runId));
    const resumeFrom = first.seqs().at(-1)!;
    const second = await openTail(json.runId, `?fromSeq=${resumeFrom}`);
    expect((await second.closed).code).toBe(1000);
    const all = [...first.seqs(), ...second.seqs()];
    expect(all).toEqual(range(0, all.length - 1));
    const final = second.frames.at(-1)!;
    expect(isStatusFrame(final) && final.record).toMatchObject({ status: 'completed' });
    expect([...chunks(first), ...chunks(second)]).toEqual(await runnerLines(json.runId));
  });
});
