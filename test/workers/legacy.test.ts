import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { isStatusFrame, type EventFrame, type RunView } from '../../src/protocol/index.ts';
import aborted from '../fixtures/legacy/aborted.json';
import convergedCompleted from '../fixtures/legacy/converged-completed.json';
import converged from '../fixtures/legacy/converged.json';
import done from '../fixtures/legacy/done.json';
import error from '../fixtures/legacy/error.json';
import running from '../fixtures/legacy/running.json';
import corruptEvent from '../fixtures/legacy/corrupt-event.json';
import hole from '../fixtures/legacy/hole.json';
import interrupted from '../fixtures/legacy/interrupted.json';
import numericErrorCode from '../fixtures/legacy/numeric-error-code.json';
import startsAfterZero from '../fixtures/legacy/starts-after-zero.json';
import { api, openTail, range, runStub } from './helpers.ts';

/**
 * Golden fixtures: a run as an earlier deployment left it in the object's
 * key-value storage (`kv`), and what the API must serve after migrating it
 * (`expected`: the record as GET /runs/:id answers it, minus links, and the
 * events in seq order).
 */
interface LegacyFixture {
  runId: string;
  kv: Record<string, unknown>;
  expected: RunView & { events: unknown[] };
}

const TIME_FIELDS = ['createdAt', 'startedAt', 'updatedAt', 'finishedAt'] as const;

/**
 * The fixture as if it had ended an hour ago: the golden records ended in
 * 2023, far longer than RUN_TTL_SECONDS ago, and such a run expires at once
 * (see below). Only the record's clock moves; the chunks are kept as stored.
 */
function recent<F extends { runId: string; kv: Record<string, unknown>; expected: object }>(fixture: F): F {
  const copy = structuredClone(fixture);
  const rec = copy.kv[`rec:${copy.runId}`] as Record<string, number>;
  const offset = Date.now() - 3_600_000 - rec.updatedAt!;
  for (const target of [rec, copy.expected as Record<string, number>]) {
    for (const field of TIME_FIELDS) if (typeof target[field] === 'number') target[field] += offset;
  }
  return copy;
}

/** The same fixture under another run id, so one test file can seed it twice. */
function renamed<F extends { runId: string }>(fixture: F, runId: string): F {
  return JSON.parse(JSON.stringify(fixture).replaceAll(fixture.runId, runId)) as F;
}

const FIXTURES: Record<string, LegacyFixture> = {
  'done → completed, 12 events, one stored as JSON text': done as LegacyFixture,
  'error → failed, error carried, missing threadId → runId': error as LegacyFixture,
  'running unchanged, no finishedAt': running as LegacyFixture,
  'aborted unchanged, gains finishedAt': aborted as LegacyFixture,
  'already converged (startedAt, failed, own finishedAt)': converged as LegacyFixture,
  'already converged completed without finishedAt': convergedCompleted as LegacyFixture,
};

/** The SPEC's production limit on one SQLite row, and the log's own budget (`MAX_ROW_CHARS`). */
const ROW_LIMIT_BYTES = 2 * 1024 * 1024;
const ROW_BUDGET_CHARS = 512 * 1024;

function seed(runId: string, kv: Record<string, unknown>) {
  return runInDurableObject(runStub(runId), (_object, state) => {
    for (const [key, value] of Object.entries(kv)) state.storage.kv.put(key, value);
  });
}

function legacyKeys(runId: string) {
  return runInDurableObject(runStub(runId), (_object, state) =>
    [...state.storage.kv.list()].map(([key]) => key).filter((key) => key.startsWith('rec:') || key.startsWith('evt:')),
  );
}

/**
 * Rows changed on the object's SQLite connection since it opened. SQLite's
 * `total_changes()` counts every row inserted, updated or deleted through the
 * connection — the run tables, the key-value API's rows and the alarm all
 * live in that one database — so an unchanged count across a request means
 * the request wrote nothing. The object is not evicted in between (that
 * would reopen the connection and restart the count).
 */
function totalChanges(runId: string): Promise<number> {
  return runInDurableObject(runStub(runId), (_object, state) => state.storage.sql.exec<{ n: number }>('SELECT total_changes() AS n').one().n);
}

async function getRecord(runId: string): Promise<Record<string, unknown>> {
  const res = await api(`/runs/${runId}`);
  expect(res.status).toBe(200);
  const { links, ...record } = (await res.json()) as Record<string, unknown>;
  expect(links).toEqual({ self: `/runs/${runId}`, ws: `/runs/${runId}/ws`, events: `/runs/${runId}/events` });
  return record;
}

function expectedRecord(fixture: LegacyFixture): RunView {
  const { events: _events, ...record } = fixture.expected;
  return record;
}

describe.each(Object.entries(FIXTURES))('legacy run: %s', (_name, golden) => {
  it('is migrated on first read, served like any run, and read again with no write', async () => {
    const fixture = recent(golden);
    const { runId } = fixture;
    const record = expectedRecord(fixture);
    const terminal = record.status !== 'running';

    const beforeSeed = await totalChanges(runId);
    await seed(runId, fixture.kv);
    // The meter sees key-value writes, so it would see the migration's deletes too.
    const beforeFirstRead = await totalChanges(runId);
    expect(beforeFirstRead).toBeGreaterThan(beforeSeed);

    expect(await getRecord(runId)).toEqual(record);
    expect(await totalChanges(runId)).toBeGreaterThan(beforeFirstRead);
    expect(await legacyKeys(runId)).toEqual([]);

    const tail = await openTail(runId);
    if (terminal) {
      expect((await tail.closed).code).toBe(1000);
    } else {
      await tail.until(() => tail.seqs().length === fixture.expected.events.length);
    }
    const events = tail.frames.filter((f): f is EventFrame => !isStatusFrame(f));
    expect(events.map((f) => f.seq)).toEqual(range(0, fixture.expected.events.length - 1));
    expect(events.map((f) => f.id)).toEqual(events.map((f) => String(f.seq)));
    expect(events.map((f) => f.chunk)).toEqual(fixture.expected.events);
    const statuses = tail.frames.filter(isStatusFrame);
    if (terminal) {
      expect(statuses).toEqual([{ type: 'status', record }]);
      expect(isStatusFrame(tail.frames.at(-1)!)).toBe(true);
    } else {
      expect(statuses).toEqual([]);
      tail.ws.close(1000, 'enough');
    }

    const beforeSecondRead = await totalChanges(runId);
    expect(await getRecord(runId)).toEqual(record);
    expect(await totalChanges(runId)).toBe(beforeSecondRead);
    expect(await legacyKeys(runId)).toEqual([]);
  });
});

async function readNdjson(runId: string): Promise<Array<Record<string, unknown>>> {
  const res = await api(`/runs/${runId}/events`);
  expect(res.status).toBe(200);
  return new TextDecoder()
    .decode(await res.arrayBuffer())
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('legacy runs beyond the fixtures', () => {
  const textChunk = (i: number, pad: number) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `${i}:${'x'.repeat(pad)}` });

  function rowStats(runId: string) {
    return runInDurableObject(runStub(runId), (_object, state) =>
      state.storage.sql
        .exec<{ rows: number; maxChars: number; maxBytes: number }>(
          'SELECT COUNT(*) AS rows, MAX(length(chunks)) AS maxChars, MAX(length(CAST(chunks AS BLOB))) AS maxBytes FROM events',
        )
        .one(),
    );
  }

  it('carries over a run of 1,200 events in seq order', async () => {
    const runId = `run_${'12'.repeat(16)}`;
    const count = 1_200;
    const kv: Record<string, unknown> = {
      [`rec:${runId}`]: { runId, threadId: 't', status: 'done', lastSeq: count - 1, createdAt: Date.now() - 2_000, updatedAt: Date.now() - 1_000 },
    };
    for (let seq = count - 1; seq >= 0; seq--) kv[`evt:${runId}:${String(seq).padStart(8, '0')}`] = textChunk(seq, 4);
    await seed(runId, kv);
    const frames = await readNdjson(runId);
    expect(frames.slice(0, -1).map((f) => f.seq)).toEqual(range(0, count - 1));
    expect(frames.slice(0, -1).map((f) => (f.chunk as { delta: string }).delta)).toEqual(range(0, count - 1).map((i) => `${i}:xxxx`));
    expect(frames.at(-1)).toMatchObject({ type: 'status', record: { status: 'completed', lastSeq: count - 1 } });
    expect(await legacyKeys(runId)).toEqual([]);
  });

  it('writes a large legacy run into rows under the row budget', async () => {
    // 40 chunks of ~100 KB: 4 MB, which no single row may hold in production (2 MB per row).
    const runId = `run_${'34'.repeat(16)}`;
    const count = 40;
    const kv: Record<string, unknown> = {
      [`rec:${runId}`]: { runId, threadId: 't', status: 'done', lastSeq: count - 1, createdAt: Date.now() - 2_000, updatedAt: Date.now() - 1_000 },
    };
    const chunks = range(0, count - 1).map((i) => textChunk(i, 100_000));
    chunks.forEach((chunk, seq) => (kv[`evt:${runId}:${String(seq).padStart(8, '0')}`] = chunk));
    await seed(runId, kv);
    const frames = await readNdjson(runId);
    expect(frames.slice(0, -1).map((f) => f.chunk)).toEqual(chunks);
    const stats = await rowStats(runId);
    expect(stats.maxBytes).toBeLessThan(ROW_LIMIT_BYTES);
    expect(stats.maxChars).toBeLessThanOrEqual(ROW_BUDGET_CHARS);
  });

  it('schedules the retention alarm of a migrated terminal run (RUN_TTL_SECONDS after finishedAt)', async () => {
    const runId = `run_${'56'.repeat(16)}`;
    const updatedAt = Date.now() - 60_000;
    await seed(runId, {
      [`rec:${runId}`]: { runId, threadId: 't', status: 'done', lastSeq: 0, createdAt: updatedAt - 1_000, updatedAt },
      [`evt:${runId}:00000000`]: { type: 'RUN_FINISHED', runId, finishReason: 'stop' },
    });
    expect(await getRecord(runId)).toMatchObject({ status: 'completed', finishedAt: updatedAt });
    const alarm = await runInDurableObject(runStub(runId), (_object, state) => state.storage.getAlarm());
    // wrangler.toml: RUN_TTL_SECONDS = "604800".
    expect(alarm).toBe(updatedAt + 604_800_000);
  });
});

/** A fixture that is served, with the seqs its log holds (not always 0..n). */
interface ServedFixture extends LegacyFixture {
  expected: LegacyFixture['expected'] & { seqs: number[] };
}

function servedRecord(fixture: ServedFixture): RunView {
  const { events: _events, seqs: _seqs, ...record } = fixture.expected;
  return record;
}

describe('legacy records the seed accepted', () => {
  it.each([
    ['a hole in its seqs', hole],
    ['a log that starts after seq 0', startsAfterZero],
  ])('serves %s on the WebSocket exactly as over HTTP: each frame keeps its seq, then the status', async (_name, raw) => {
    const fixture = recent(raw as ServedFixture);
    const { runId } = fixture;
    await seed(runId, fixture.kv);
    const record = servedRecord(fixture);
    expect(await getRecord(runId)).toEqual(record);

    const tail = await openTail(runId);
    expect((await tail.closed).code).toBe(1000);
    const events = tail.frames.filter((f): f is EventFrame => !isStatusFrame(f));
    expect(events.map((f) => f.seq)).toEqual(fixture.expected.seqs);
    expect(events.map((f) => f.id)).toEqual(fixture.expected.seqs.map(String));
    expect(events.map((f) => f.chunk)).toEqual(fixture.expected.events);
    expect(tail.frames.at(-1)).toEqual({ type: 'status', record });

    const ndjson = await readNdjson(runId);
    expect(ndjson.slice(0, -1).map((f) => f.seq)).toEqual(fixture.expected.seqs);
    expect(ndjson.slice(0, -1).map((f) => f.chunk)).toEqual(fixture.expected.events);
    expect(ndjson.at(-1)).toEqual({ type: 'status', record });

    // A client resuming inside the hole gets what follows it.
    const resumed = await openTail(runId, `?fromSeq=${fixture.expected.seqs[0]}`);
    await resumed.closed;
    expect(resumed.seqs()).toEqual(fixture.expected.seqs.slice(1));
  });

  it('maps core\'s interrupted (a pause, not terminal) to a live run, as core defines it', async () => {
    const fixture = recent(interrupted as ServedFixture);
    const { runId } = fixture;
    await seed(runId, fixture.kv);
    const record = servedRecord(fixture);
    expect(await getRecord(runId)).toEqual(record);
    expect(record).not.toHaveProperty('finishedAt');
    const tail = await openTail(runId);
    await tail.until(() => tail.seqs().length === fixture.expected.seqs.length);
    expect(tail.frames.map((f) => ('chunk' in f ? f.chunk : f))).toEqual(fixture.expected.events);
    tail.ws.close(1000, 'enough');
    expect(await legacyKeys(runId)).toEqual([]);
  });

  it('keeps an error code the seed stored as a number, as its text', async () => {
    const fixture = recent(numericErrorCode as ServedFixture);
    await seed(fixture.runId, fixture.kv);
    expect(await getRecord(fixture.runId)).toEqual(servedRecord(fixture));
    expect(await legacyKeys(fixture.runId)).toEqual([]);
  });

  it.each(Object.entries(FIXTURES).filter(([, fixture]) => fixture.expected.status !== 'running'))(
    'expires at once when it ended longer than RUN_TTL_SECONDS ago (%s)',
    async (_name, golden) => {
      // The golden fixture as stored: it ended in 2023.
      const runId = `run_${'9a'.repeat(15)}${String(Object.keys(FIXTURES).indexOf(_name)).padStart(2, '0')}`;
      const fixture = renamed(golden, runId);
      await seed(runId, fixture.kv);
      const res = await api(`/runs/${runId}`);
      expect(res.status).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'run_not_found' } });
      expect(await legacyKeys(runId)).toEqual([]);
      // Nothing was written into the current layout either, and a second read writes nothing.
      const tables = await runInDurableObject(runStub(runId), (_object, state) => state.storage.sql.exec(`SELECT name FROM sqlite_master WHERE name = 'run'`).toArray());
      expect(tables).toEqual([]);
      const before = await totalChanges(runId);
      expect((await api(`/runs/${runId}/events`)).status).toBe(404);
      expect(await totalChanges(runId)).toBe(before);
    },
  );

  it('sets an unreadable record aside and answers with the reason: 410 to reads, 409 to cancel, with no write after the first', async () => {
    const { runId, kv, expected } = corruptEvent;
    await seed(runId, kv);
    const first = await api(`/runs/${runId}`);
    expect(first.status).toBe(410);
    const body = (await first.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('run_unreadable');
    expect(body.error.message).toContain(expected.field);
    expect(await legacyKeys(runId)).toEqual([]);
    const aside = await runInDurableObject(runStub(runId), (_object, state) =>
      [...state.storage.kv.list({ prefix: 'aside:' })].map(([key]) => key).sort(),
    );
    expect(aside).toEqual([`aside:evt:${runId}:00000000`, `aside:evt:${runId}:00000001`, `aside:reason:${runId}`, `aside:rec:${runId}`]);

    const before = await totalChanges(runId);
    const again = await api(`/runs/${runId}`);
    expect(again.status).toBe(410);
    expect(await again.json()).toEqual(body);
    expect((await api(`/runs/${runId}/events`)).status).toBe(410);
    expect((await api(`/runs/${runId}/ws`, { headers: { upgrade: 'websocket' } })).status).toBe(410);
    const cancel = await api(`/runs/${runId}/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(409);
    expect(await cancel.json()).toMatchObject({ error: { code: 'run_unreadable' } });
    expect(await totalChanges(runId)).toBe(before);
  });
});
