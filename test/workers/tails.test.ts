import { evictDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { isStatusFrame } from '../../src/protocol/index.ts';
import { createRun, feed, finished, openTail, range, runStub, texts } from './helpers.ts';

describe('WebSocket tails', () => {
  it('replays the backlog for every fromSeq, then the live tail, then one status frame and close 1000', async () => {
    const { json } = await createRun();
    const runId = json.runId;
    await feed(runId, texts(0, 10)); // seqs 0..9
    const cases = [
      { fromSeq: -1, expected: range(0, 14) },
      { fromSeq: 4, expected: range(5, 14) },
      { fromSeq: 9, expected: range(10, 14) },
      { fromSeq: 12, expected: range(13, 14) },
    ];
    const tails = await Promise.all(cases.map((c) => openTail(runId, `?fromSeq=${c.fromSeq}`)));
    await Promise.all(tails.map((t, i) => t.until(() => t.seqs().length >= Math.max(0, 10 - (cases[i]!.fromSeq + 1)))));
    await feed(runId, [...texts(10, 4), finished(runId)]); // seqs 10..14
    for (const [i, tail] of tails.entries()) {
      const close = await tail.closed;
      expect(close.code).toBe(1000);
      expect(tail.seqs()).toEqual(cases[i]!.expected);
      const last = tail.frames.at(-1)!;
      expect(isStatusFrame(last) && last.record.status).toBe('completed');
      expect(isStatusFrame(last) && last.record.lastSeq).toBe(14);
      expect(tail.frames.filter(isStatusFrame)).toHaveLength(1);
    }
  });

  it('accepts `offset` as @tanstack/ai-client sends it on reconnect', async () => {
    const { json } = await createRun();
    await feed(json.runId, [...texts(0, 5), finished(json.runId)]);
    const tail = await openTail(json.runId, `?runId=${json.runId}&offset=2`);
    await tail.closed;
    expect(tail.seqs()).toEqual([3, 4, 5]);
  });

  it('gives a late reader of a finished run the whole log and the record', async () => {
    const { json } = await createRun();
    await feed(json.runId, [...texts(0, 600), finished(json.runId)]);
    const tail = await openTail(json.runId);
    expect((await tail.closed).code).toBe(1000);
    expect(tail.seqs()).toEqual(range(0, 600));
  });

  it('never gaps or duplicates when appends race an attach', async () => {
    const { json } = await createRun();
    const runId = json.runId;
    await feed(runId, texts(0, 2500)); // longer than two replay pages
    const attaching = openTail(runId);
    const appends = (async () => {
      for (let i = 0; i < 20; i++) await feed(runId, texts(2500 + i * 5, 5));
    })();
    const [tail] = await Promise.all([attaching, appends]);
    await feed(runId, [finished(runId)]);
    await tail.closed;
    expect(tail.seqs()).toEqual(range(0, 2600));
  });

  it('serves two readers the identical stream', async () => {
    const { json } = await createRun();
    const a = await openTail(json.runId);
    await feed(json.runId, texts(0, 3));
    const b = await openTail(json.runId);
    await feed(json.runId, [...texts(3, 3), finished(json.runId)]);
    await Promise.all([a.closed, b.closed]);
    expect(a.frames).toEqual(b.frames);
    expect(a.seqs()).toEqual(range(0, 6));
  });

  it('keeps tailing after the object hibernates, with no message from the client', async () => {
    const { json } = await createRun();
    const runId = json.runId;
    const tail = await openTail(runId);
    await feed(runId, texts(0, 3));
    await tail.until(() => tail.seqs().length === 3);
    // The runner restarts: the pump hangs up and waits for the alarm to reattach,
    // so nothing but the hibernatable socket is left on the object.
    await fetch(`http://quiet-runner.test/control/restart/${runId}`, { method: 'POST' });
    while (((await (await fetch(`http://quiet-runner.test/control/refused/${runId}`)).json()) as { refused: number }).refused < 1) {
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await evictDurableObject(runStub(runId), { webSockets: 'hibernate' });
    await feed(runId, [...texts(3, 3), finished(runId)]);
    expect((await tail.closed).code).toBe(1000);
    expect(tail.seqs()).toEqual(range(0, 6));
  });

  it('closes a reader whose fromSeq is beyond the end once the run is terminal', async () => {
    const { json } = await createRun();
    await feed(json.runId, [...texts(0, 2), finished(json.runId)]);
    const tail = await openTail(json.runId, '?fromSeq=50');
    expect((await tail.closed).code).toBe(1000);
    expect(tail.seqs()).toEqual([]);
    expect(tail.frames).toHaveLength(1);
  });
});
