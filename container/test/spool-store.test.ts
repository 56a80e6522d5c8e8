import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SpoolStore, type ReadPosition } from '../src/spool-store.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'spool-store-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Line `i` is distinct and of varying size (some far over the read batch), multi-byte characters included. */
function line(i: number): string {
  return JSON.stringify({ seq: i, text: `é${'x'.repeat(i % 7 === 0 ? 100_000 : (i * 37) % 300)}` });
}

function fill(store: SpoolStore, count: number): string[] {
  const lines = Array.from({ length: count }, (_, i) => line(i));
  for (const text of lines) store.push(text, Buffer.byteLength(text));
  return lines;
}

function readAll(store: SpoolStore, seq: number, batch?: number): string[] {
  const position: ReadPosition = { seq };
  let text = '';
  for (let part = store.read(position, batch); part !== ''; part = store.read(position, batch)) text += part;
  return text === '' ? [] : text.slice(0, -1).split('\n');
}

describe('SpoolStore', () => {
  it('keeps at most its memory budget in the heap and serves every seq exactly, from disk or memory', () => {
    const store = new SpoolStore({ dir, prefix: 'r', memoryBytes: 4096, maxBytes: 1 << 30 });
    const lines = fill(store, 300);
    expect(store.memoryBytes).toBeLessThan(4096 + 100_100);
    expect(store.diskBytes).toBeGreaterThan(0);
    expect(readdirSync(dir).length).toBeGreaterThan(1);
    for (const from of [0, 1, 6, 7, 8, 150, 298, 299, 300]) {
      expect(readAll(store, from)).toEqual(lines.slice(from));
      expect(readAll(store, from, 1)).toEqual(lines.slice(from));
    }
  });

  it('moves every line to disk when the run ends, and reads them back the same', () => {
    const store = new SpoolStore({ dir, prefix: 'r', memoryBytes: 1 << 20, maxBytes: 1 << 30 });
    const lines = fill(store, 50);
    expect(store.diskBytes).toBe(0);
    store.spillAll();
    expect(store.memoryBytes).toBe(0);
    expect(readAll(store, 0)).toEqual(lines);
    expect(readAll(store, 33)).toEqual(lines.slice(33));
  });

  it('drops the oldest segments past maxBytes, keeps the newest lines, and says where it starts', () => {
    const store = new SpoolStore({ dir, prefix: 'r', memoryBytes: 1 << 20, maxBytes: 16 * 1024 });
    const lines = Array.from({ length: 500 }, (_, i) => JSON.stringify({ seq: i, pad: 'y'.repeat(100) }));
    for (const text of lines) {
      store.push(text, Buffer.byteLength(text));
      store.trim();
    }
    expect(store.diskBytes + store.memoryBytes).toBeLessThanOrEqual(16 * 1024);
    expect(store.firstSeq).toBeGreaterThan(0);
    expect(store.lastSeq).toBe(499);
    expect(readAll(store, store.firstSeq)).toEqual(lines.slice(store.firstSeq));
  });

  it('deletes its files on release, after which it holds nothing', () => {
    const store = new SpoolStore({ dir, prefix: 'r', memoryBytes: 1024, maxBytes: 1 << 30 });
    fill(store, 100);
    store.release();
    expect(readdirSync(dir)).toEqual([]);
    expect(store.diskBytes + store.memoryBytes).toBe(0);
    expect(store.read({ seq: 0 })).toBe('');
  });
});
