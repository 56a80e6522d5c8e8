import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { isStatusFrame, type RunView } from '../../src/protocol/index.ts';
import { api, createRun, feed, finished, openTail, runStub, texts } from './helpers.ts';

async function record(runId: string) {
  const res = await api(`/runs/${runId}`);
  const { links: _links, ...body } = (await res.json()) as RunView & { links?: unknown };
  return { status: res.status, body: body as RunView };
}

describe('retention', () => {
  it('deletes a terminal run RUN_TTL_SECONDS after it finished, then answers 404', async () => {
    const { json } = await createRun();
    await feed(json.runId, [...texts(0, 3), finished(json.runId)]);
    const stub = runStub(json.runId);
    // Not due yet: the alarm keeps the run.
    await runDurableObjectAlarm(stub);
    expect((await record(json.runId)).status).toBe(200);
    // Travel past the TTL by moving the finish time back, as storage sees it.
    await runInDurableObject(stub, (_object, state) => {
      state.storage.sql.exec('UPDATE run SET finished_at = finished_at - ?', 8 * 24 * 3600 * 1000);
    });
    await runInDurableObject(stub, async (_object, state) => {
      await state.storage.setAlarm(Date.now());
    });
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const gone = await record(json.runId);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ error: { code: 'run_not_found' } });
    await runInDurableObject(stub, (_object, state) => {
      expect(state.storage.sql.exec(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '\\_%' ESCAPE '\\'`).toArray()).toEqual([]);
    });
  });

  it('arms the alarm for the retention deadline when a run finishes', async () => {
    const { json } = await createRun();
    await feed(json.runId, [finished(json.runId)]);
    const done = (await record(json.runId)).body;
    const stub = runStub(json.runId);
    const alarm = () => runInDurableObject(stub, (_object, state) => state.storage.getAlarm());
    // Until the run's thread acknowledges the end, the alarm comes back sooner to retry telling it.
    expect(await alarm()).toBeLessThanOrEqual(done.finishedAt! + 604_800_000);
    while (await runInDurableObject(stub, (_object, state) => state.storage.sql.exec<{ n: number | null }>('SELECT thread_notified_at AS n FROM run').one().n === null)) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await runDurableObjectAlarm(stub);
    expect(await alarm()).toBe(done.finishedAt! + 604_800_000);
  });
});

describe('cancel', () => {
  it('leaves exactly one terminal status when it races the run’s own end', async () => {
    for (let i = 0; i < 10; i++) {
      const { json } = await createRun();
      const tail = await openTail(json.runId);
      await feed(json.runId, texts(0, 3));
      const [fed, cancelled] = await Promise.all([
        feed(json.runId, [...texts(3, 2), finished(json.runId)]),
        api(`/runs/${json.runId}/cancel`, { method: 'POST' }),
      ]);
      expect(cancelled.status).toBe(200);
      await tail.closed;
      const statuses = tail.frames.filter(isStatusFrame);
      expect(statuses).toHaveLength(1);
      const final = (await record(json.runId)).body;
      expect(statuses[0]!.record).toEqual(final);
      // Whoever won, nothing was appended after the terminal status.
      if (fed === 'rejected') expect(final).toMatchObject({ status: 'aborted', lastSeq: 2 });
      else expect(final).toMatchObject({ status: 'completed', lastSeq: 5 });
      expect(tail.seqs()).toEqual(Array.from({ length: final.lastSeq + 1 }, (_, s) => s));
    }
  });

  it('makes aborted durable and appends nothing after it', async () => {
    const { json } = await createRun();
    await feed(json.runId, texts(0, 2));
    const res = await api(`/runs/${json.runId}/cancel`, { method: 'POST' });
    expect(await res.json()).toMatchObject({ status: 'aborted', lastSeq: 1 });
    expect(await feed(json.runId, texts(2, 1))).toBe('rejected');
    await runInDurableObject(runStub(json.runId), (_object, state) => {
      expect(state.storage.sql.exec<{ status: string }>('SELECT status FROM run').one().status).toBe('aborted');
      expect(state.storage.sql.exec<{ n: number }>('SELECT MAX(last_seq) AS n FROM events').one().n).toBe(1);
    });
  });
});

describe('vanishing clients', () => {
  it('stops replaying to a client that closes mid-replay, and keeps serving others', async () => {
    const { json } = await createRun();
    await feed(json.runId, texts(0, 3000));
    const leaver = await openTail(json.runId);
    await leaver.until((frames) => frames.length > 0);
    leaver.ws.close(1000, 'bye');
    await leaver.closed;
    const stayer = await openTail(json.runId);
    await feed(json.runId, [finished(json.runId)]);
    await stayer.closed;
    expect(stayer.seqs()).toHaveLength(3001);
    expect(leaver.seqs().length).toBeLessThan(3001);
    await runInDurableObject(runStub(json.runId), (_object, state) => {
      expect(state.getWebSockets()).toHaveLength(0);
    });
  });
});
