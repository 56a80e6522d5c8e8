import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { RunView, RunnerRunRequest } from '../../src/protocol/index.ts';
import { RunLog, TerminalRunError, type RunInit, type StoredEvent } from '../../src/run/run-log.ts';
import { Tails } from '../../src/run/tails.ts';
import { range } from './helpers.ts';

/** SPEC's production limit on one SQLite row in a Durable Object. */
const ROW_LIMIT_BYTES = 2 * 1024 * 1024;
/** The log's own row budget (`MAX_ROW_CHARS` in run-log.ts). */
const ROW_BUDGET_CHARS = 512 * 1024;

let objects = 0;

/**
 * Runs `fn` against a RunLog on a fresh object's storage. The API never
 * touches these objects, so the object's own RunLog instance caches nothing
 * that the one under test could disagree with.
 */
function withLog<R>(fn: (log: RunLog, storage: DurableObjectStorage) => R | Promise<R>): Promise<R> {
  const stub = env.RUNS.get(env.RUNS.idFromName(`log-test-${++objects}-${crypto.randomUUID()}`));
  return runInDurableObject(stub, (_object, state) => fn(new RunLog(state.storage), state.storage));
}

function init(runId: string, overrides: Partial<RunInit> = {}): RunInit {
  const request: RunnerRunRequest = { runId, threadId: `thread-${runId}`, tenant: null, messages: [{ role: 'user', content: 'hi' }], harness: 'demo' };
  return { runId, threadId: `thread-${runId}`, request, requestHash: 'hash-1', now: 1_000, ...overrides };
}

/** A chunk's JSON text, as the driver stores it; `pad` makes it about that many characters. */
function raw(seq: number, pad = 0): string {
  return JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `d${seq}`, pad: 'p'.repeat(pad) });
}

function raws(from: number, count: number, pad = 0): string[] {
  return Array.from({ length: count }, (_, i) => raw(from + i, pad));
}

/** Every event after `afterSeq`, read the way a replay does: page after page. */
function readAll(log: RunLog, afterSeq = -1, pageSize?: number): StoredEvent[] {
  const events: StoredEvent[] = [];
  let cursor = afterSeq;
  for (;;) {
    const page = log.page(cursor, pageSize);
    if (page.length === 0) return events;
    events.push(...page);
    cursor = page.at(-1)!.seq;
  }
}

interface RowStats {
  rows: number;
  maxChars: number;
  maxBytes: number;
}

function rowStats(storage: DurableObjectStorage): RowStats {
  return storage.sql
    .exec<{ rows: number; maxChars: number; maxBytes: number }>(
      'SELECT COUNT(*) AS rows, COALESCE(MAX(length(chunks)), 0) AS maxChars, COALESCE(MAX(length(CAST(chunks AS BLOB))), 0) AS maxBytes FROM events',
    )
    .one();
}

/**
 * The real storage, with every SQL cursor the log opens kept so its
 * `rowsWritten` (the number the platform bills) can be summed afterwards.
 * Only `sql.exec` is observed; every call still reaches the real storage.
 */
function meteredStorage(storage: DurableObjectStorage): { storage: DurableObjectStorage; rowsWritten: () => number } {
  const cursors: Array<{ rowsWritten: number }> = [];
  const sql = new Proxy(storage.sql, {
    get(target, prop) {
      if (prop === 'exec') {
        return (query: string, ...bindings: unknown[]) => {
          const cursor = target.exec(query, ...bindings);
          cursors.push(cursor);
          return cursor;
        };
      }
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const metered = new Proxy(storage, {
    get(target, prop) {
      if (prop === 'sql') return sql;
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { storage: metered, rowsWritten: () => cursors.reduce((sum, c) => sum + c.rowsWritten, 0) };
}

describe('RunLog.open', () => {
  it('creates a running record with lastSeq -1', () =>
    withLog((log) => {
      const opened = log.open(init('run-a'));
      expect(opened.created).toBe(true);
      expect(opened.requestHash).toBe('hash-1');
      expect(opened.record).toEqual({ runId: 'run-a', threadId: 'thread-run-a', status: 'running', lastSeq: -1, startedAt: 1_000, updatedAt: 1_000 });
      expect(log.get()).toEqual(opened.record);
      expect(log.request()).toEqual(init('run-a').request);
    }));

  it('is idempotent: a second open returns the first record unchanged', () =>
    withLog((log) => {
      const first = log.open(init('run-a'));
      log.append(raws(0, 2), 1_500);
      const current = log.get();
      const second = log.open(init('run-a', { threadId: 'other', requestHash: 'hash-2', now: 9_000 }));
      expect(second.created).toBe(false);
      expect(second.requestHash).toBe(first.requestHash);
      expect(second.record).toEqual(current);
      expect(second.record.threadId).toBe('thread-run-a');
      expect(second.record.startedAt).toBe(1_000);
      expect(second.record.lastSeq).toBe(1);
      expect(log.request()).toEqual(init('run-a').request);
    }));

  it('knows nothing before open', () =>
    withLog((log, storage) => {
      expect(log.get()).toBeNull();
      expect(log.request()).toBeNull();
      expect(log.lastSeq).toBe(-1);
      expect(log.page(-1)).toEqual([]);
      expect(() => log.append([raw(0)], 1)).toThrow();
      // Reads only: an unknown run leaves no schema behind.
      expect(storage.sql.exec("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '_cf_%'").toArray()).toEqual([]);
    }));
});

describe('RunLog.append', () => {
  it('assigns gap-free seqs across calls and returns each range', () =>
    withLog((log) => {
      log.open(init('run-b'));
      expect(log.append(raws(0, 3), 2_000)).toEqual({ firstSeq: 0, lastSeq: 2 });
      expect(log.append(raws(3, 1), 2_001)).toEqual({ firstSeq: 3, lastSeq: 3 });
      expect(log.append([], 2_002)).toEqual({ firstSeq: 4, lastSeq: 3 });
      expect(log.append(raws(4, 5), 2_003)).toEqual({ firstSeq: 4, lastSeq: 8 });
      expect(log.lastSeq).toBe(8);
      expect(log.get()).toMatchObject({ lastSeq: 8, updatedAt: 2_003 });
      expect(readAll(log)).toEqual(raws(0, 9).map((r, seq) => ({ seq, raw: r })));
    }));

  it('throws TerminalRunError after finish and appends nothing', () =>
    withLog((log) => {
      log.open(init('run-c'));
      log.append(raws(0, 2), 2_000);
      log.finish('completed', undefined, 3_000);
      let thrown: unknown;
      try {
        log.append(raws(2, 1), 4_000);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(TerminalRunError);
      expect((thrown as TerminalRunError).record).toMatchObject({ status: 'completed', lastSeq: 1 });
      expect(log.lastSeq).toBe(1);
      expect(readAll(log).map((e) => e.seq)).toEqual([0, 1]);
    }));

  it('splits a large append into rows under the row budget, and replays it intact', () =>
    withLog((log, storage) => {
      log.open(init('run-d'));
      const big = raws(0, 3_000, 1_000); // ~3 MB
      expect(log.append(big, 2_000)).toEqual({ firstSeq: 0, lastSeq: 2_999 });
      const stats = rowStats(storage);
      expect(stats.rows).toBeGreaterThanOrEqual(Math.ceil(big.join('\n').length / ROW_BUDGET_CHARS));
      expect(stats.rows).toBeLessThan(20);
      expect(stats.maxChars).toBeLessThanOrEqual(ROW_BUDGET_CHARS);
      expect(stats.maxBytes).toBeLessThan(ROW_LIMIT_BYTES);
      const events = readAll(log);
      expect(events.map((e) => e.seq)).toEqual(range(0, 2_999));
      expect(events.map((e) => e.raw)).toEqual(big);
      expect(readAll(new RunLog(storage))).toEqual(events);
    }));

  it('gives a chunk larger than the row budget a row of its own', () =>
    withLog((log, storage) => {
      log.open(init('run-e'));
      const chunks = [raw(0), raw(1, 700_000), raw(2)];
      log.append(chunks, 2_000);
      expect(rowStats(storage).rows).toBe(3);
      expect(readAll(log).map((e) => e.raw)).toEqual(chunks);
    }));

  it('writes far fewer rows than chunks for a batch', () =>
    withLog((_unused, storage) => {
      const batched = meteredStorage(storage);
      const log = new RunLog(batched.storage);
      log.open(init('run-f'));
      const beforeBatch = batched.rowsWritten();
      log.append(raws(0, 100), 2_000);
      const batchRows = batched.rowsWritten() - beforeBatch;
      expect(batchRows).toBeGreaterThan(0);
      expect(batchRows).toBeLessThanOrEqual(3);

      // The meter is not vacuous: one append per chunk writes at least a row each.
      const beforeSingles = batched.rowsWritten();
      for (let i = 0; i < 20; i++) log.append([raw(100 + i)], 2_001 + i);
      expect(batched.rowsWritten() - beforeSingles).toBeGreaterThanOrEqual(20);
      expect(readAll(log).map((e) => e.seq)).toEqual(range(0, 119));
    }));
});

describe('RunLog.finish', () => {
  it('is idempotent: the first terminal status wins', () =>
    withLog((log) => {
      log.open(init('run-g'));
      log.append(raws(0, 1), 2_000);
      const first = log.finish('failed', { message: 'boom', code: 'x' }, 3_000);
      expect(first?.changed).toBe(true);
      expect(first?.record).toEqual({
        runId: 'run-g',
        threadId: 'thread-run-g',
        status: 'failed',
        lastSeq: 0,
        startedAt: 1_000,
        finishedAt: 3_000,
        updatedAt: 3_000,
        error: { message: 'boom', code: 'x' },
      });
      const second = log.finish('completed', undefined, 4_000);
      expect(second).toEqual({ changed: false, record: first!.record });
      const third = log.finish('aborted', { message: 'other' }, 5_000);
      expect(third).toEqual({ changed: false, record: first!.record });
      expect(log.get()).toEqual(first!.record);
    }));

  it('returns null for an unknown run', () =>
    withLog((log) => {
      expect(log.finish('completed', undefined, 1)).toBeNull();
      expect(log.get()).toBeNull();
    }));
});

describe('RunLog.page', () => {
  it('answers every (afterSeq, maxEvents) across row boundaries', () =>
    withLog((log, storage) => {
      log.open(init('run-i'));
      const all: string[] = [];
      const add = (chunks: string[]) => {
        log.append(chunks, 2_000 + all.length);
        all.push(...chunks);
      };
      // Many small batches: rows of 1 to 4 chunks.
      for (let i = 0; i < 25; i++) add(raws(all.length, 1 + (i % 4)));
      // One big batch the log must split by size: ~60 KB chunks, about 8 to a row.
      add(raws(all.length, 24, 60_000));
      add(raws(all.length, 5));
      const rows = rowStats(storage).rows;
      expect(rows).toBeGreaterThan(25 + 2);
      const lastSeq = all.length - 1;
      expect(log.lastSeq).toBe(lastSeq);
      for (let afterSeq = -1; afterSeq <= lastSeq + 1; afterSeq++) {
        for (const maxEvents of [1, 2, 3, 7, 9, 1_000]) {
          const expected = all.slice(afterSeq + 1, afterSeq + 1 + maxEvents).map((r, i) => ({ seq: afterSeq + 1 + i, raw: r }));
          expect(log.page(afterSeq, maxEvents), `page(${afterSeq}, ${maxEvents})`).toEqual(expected);
        }
      }
      // Paging with every page size reassembles the log exactly.
      for (const size of [1, 3, 8, 512]) expect(readAll(log, -1, size).map((e) => e.raw)).toEqual(all);
    }));
});

describe('a fresh RunLog on the same storage', () => {
  it('derives lastSeq and the record from storage', () =>
    withLog((log, storage) => {
      log.open(init('run-j'));
      log.append(raws(0, 7), 2_000);
      log.append(raws(7, 3, 200_000), 2_500);
      const fresh = new RunLog(storage);
      expect(fresh.lastSeq).toBe(9);
      expect(fresh.get()).toEqual(log.get());
      expect(fresh.get()).toMatchObject({ lastSeq: 9, updatedAt: 2_500 });
      expect(fresh.append(raws(10, 2), 3_000)).toEqual({ firstSeq: 10, lastSeq: 11 });
      expect(readAll(new RunLog(storage)).map((e) => e.seq)).toEqual(range(0, 11));
    }));
});

describe('the fan-out over the log (HTTP tails)', () => {
  function withTails<R>(fn: (log: RunLog, tails: Tails) => R | Promise<R>): Promise<R> {
    const stub = env.RUNS.get(env.RUNS.idFromName(`tails-test-${++objects}-${crypto.randomUUID()}`));
    return runInDurableObject(stub, (_object, state) => {
      const log = new RunLog(state.storage);
      return fn(log, new Tails(state, log));
    });
  }

  /** What the lifecycle does after an append: the events, then the fan-out. */
  function append(log: RunLog, tails: Tails, chunks: string[], now: number): void {
    const { firstSeq } = log.append(chunks, now);
    tails.flush(
      chunks.map((r, i) => ({ seq: firstSeq + i, raw: r })),
      null,
    );
  }

  it('yields the backlog, then live appends, then the final record, and returns', () =>
    withTails(async (log, tails) => {
      log.open(init('run-k'));
      log.append(raws(0, 3), 2_000);
      const reader = tails.stream(-1, new AbortController().signal);
      const backlog = await reader.next();
      expect(backlog.value).toEqual(raws(0, 3).map((r, seq) => ({ seq, raw: r })));

      const pending = reader.next();
      append(log, tails, raws(3, 2), 2_100);
      expect((await pending).value).toEqual(raws(3, 2).map((r, i) => ({ seq: 3 + i, raw: r })));

      const waiting = reader.next();
      tails.flush([], null); // a wake with no event: the reader keeps waiting
      append(log, tails, raws(5, 1), 2_200);
      const ended = log.finish('completed', undefined, 2_300)!;
      tails.flush([], ended.record);
      expect((await waiting).value).toEqual([{ seq: 5, raw: raws(5, 1)[0] }]);
      const final = await reader.next();
      expect(final.done).toBe(false);
      expect(final.value as RunView).toMatchObject({ status: 'completed', lastSeq: 5, finishedAt: 2_300 });
      expect(await reader.next()).toEqual({ done: true, value: undefined });
    }));

  it('starts after fromSeq and ends at once for a terminal run the reader has caught up with', () =>
    withTails(async (log, tails) => {
      log.open(init('run-l'));
      log.append(raws(0, 6), 2_000);
      log.finish('aborted', undefined, 3_000);
      const seen: Array<StoredEvent[] | RunView> = [];
      for await (const item of tails.stream(3, new AbortController().signal)) seen.push(item);
      expect(seen).toHaveLength(2);
      expect((seen[0] as StoredEvent[]).map((e) => e.seq)).toEqual([4, 5]);
      expect(seen[1]).toMatchObject({ status: 'aborted', lastSeq: 5 });

      const caughtUp: Array<StoredEvent[] | RunView> = [];
      for await (const item of tails.stream(5, new AbortController().signal)) caughtUp.push(item);
      expect(caughtUp).toEqual([log.get()]);
    }));

  it('stops when its signal aborts, and counts its readers as watchers meanwhile', () =>
    withTails(async (log, tails) => {
      log.open(init('run-m'));
      const controller = new AbortController();
      const reader = tails.stream(-1, controller.signal);
      const pending = reader.next();
      expect(tails.watchers).toBe(1);
      controller.abort();
      expect(await pending).toEqual({ done: true, value: undefined });
      expect(tails.watchers).toBe(0);
    }));
});
