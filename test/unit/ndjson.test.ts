import { describe, expect, it } from 'vitest';
import { LineTooLongError, MAX_LINE_BYTES, NdjsonReader, type NdjsonItem } from '../../src/runner/ndjson.ts';

const encoder = new TextEncoder();

function readAll(pieces: Uint8Array[]): { items: NdjsonItem[]; skipped: number } {
  const reader = new NdjsonReader();
  const items: NdjsonItem[] = [];
  for (const piece of pieces) items.push(...reader.push(piece));
  items.push(...reader.end());
  return { items, skipped: reader.skipped };
}

/** Splits `bytes` at the given offsets. */
function splitAt(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const cuts = [0, ...offsets, bytes.length];
  return cuts.slice(1).map((end, i) => bytes.slice(cuts[i], end));
}

/** A small deterministic PRNG (mulberry32), so a failure reproduces. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const chunk = (n: number, delta: string) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `${n}:${delta}` });

// Multi-byte characters of every UTF-8 width, CRLF and LF endings, keep-alives
// (blank, CRLF-only, whitespace) and lines that are not chunks.
const STREAM = [
  `${JSON.stringify(chunk(0, 'caf\u00e9'))}\r\n`,
  '\n',
  `${JSON.stringify(chunk(1, '\u20ac and \u{1F600}'))}\n`,
  'runner v1 starting\n',
  '\r\n',
  `${JSON.stringify(chunk(2, '\u4e2d\u6587'))}\r\n`,
  '   \n',
  '{"broken": \n',
  '[{"type":"ARRAY"}]\n',
  '"just a string"\n',
  '{"no":"type"}\n',
  '{"type":""}\n',
  '{"type":7}\n',
  'null\n',
  `  ${JSON.stringify(chunk(3, 'padded'))}  \n`,
  JSON.stringify(chunk(4, 'last line, no newline \u{1F680}')),
].join('');

const EXPECTED_KINDS = ['chunk', 'keepalive', 'chunk', 'skipped', 'keepalive', 'chunk', 'keepalive', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'skipped', 'chunk', 'chunk'];

describe('NdjsonReader', () => {
  const bytes = encoder.encode(STREAM);
  const whole = readAll([bytes]);

  it('reads chunks, keep-alives and skipped lines in order', () => {
    expect(whole.items.map((i) => i.kind)).toEqual(EXPECTED_KINDS);
    const chunks = whole.items.filter((i): i is Extract<NdjsonItem, { kind: 'chunk' }> => i.kind === 'chunk');
    expect(chunks.map((c) => c.chunk)).toEqual([
      chunk(0, 'caf\u00e9'),
      chunk(1, '\u20ac and \u{1F600}'),
      chunk(2, '\u4e2d\u6587'),
      chunk(3, 'padded'),
      chunk(4, 'last line, no newline \u{1F680}'),
    ]);
    // The stored text is the line itself, without its CR or surrounding blanks.
    expect(chunks.map((c) => c.raw)).toEqual(chunks.map((c) => JSON.stringify(c.chunk)));
    expect(whole.skipped).toBe(8);
    expect(whole.items.find((i) => i.kind === 'skipped')).toEqual({ kind: 'skipped' });
  });

  it('gives the same items for every split into two pieces', () => {
    for (let cut = 0; cut <= bytes.length; cut++) {
      expect(readAll(splitAt(bytes, [cut])), `cut at ${cut}`).toEqual(whole);
    }
  });

  it('gives the same items byte by byte, and for random splits', () => {
    expect(readAll(splitAt(bytes, Array.from({ length: bytes.length - 1 }, (_, i) => i + 1)))).toEqual(whole);
    const random = prng(42);
    for (let round = 0; round < 200; round++) {
      const offsets = [...new Set(Array.from({ length: 1 + Math.floor(random() * 12) }, () => Math.floor(random() * bytes.length)))].sort((a, b) => a - b);
      expect(readAll(splitAt(bytes, offsets)), `offsets ${offsets.join(',')}`).toEqual(whole);
    }
  });

  it('decodes a multi-byte character split across pieces', () => {
    const line = encoder.encode(`${JSON.stringify(chunk(0, '\u{1F600}'))}\n`);
    const emoji = line.indexOf(0xf0);
    for (const cut of [emoji + 1, emoji + 2, emoji + 3]) {
      const reader = new NdjsonReader();
      expect(reader.push(line.slice(0, cut))).toEqual([]);
      const items = reader.push(line.slice(cut));
      expect(items).toEqual([{ kind: 'chunk', raw: JSON.stringify(chunk(0, '\u{1F600}')), chunk: chunk(0, '\u{1F600}') }]);
    }
  });

  it('treats a CRLF split between pieces as one line ending', () => {
    const reader = new NdjsonReader();
    expect(reader.push(encoder.encode('{"type":"A"}\r'))).toEqual([]);
    expect(reader.push(encoder.encode('\n\r'))).toEqual([{ kind: 'chunk', raw: '{"type":"A"}', chunk: { type: 'A' } }]);
    expect(reader.push(encoder.encode('\n'))).toEqual([{ kind: 'keepalive' }]);
    expect(reader.end()).toEqual([]);
  });

  it('emits a last line without a newline only at end()', () => {
    const reader = new NdjsonReader();
    expect(reader.push(encoder.encode('{"type":"A"}\n{"type":"B"}'))).toEqual([{ kind: 'chunk', raw: '{"type":"A"}', chunk: { type: 'A' } }]);
    expect(reader.end()).toEqual([{ kind: 'chunk', raw: '{"type":"B"}', chunk: { type: 'B' } }]);
    expect(reader.end()).toEqual([]);
  });

  it('counts skipped lines', () => {
    const reader = new NdjsonReader();
    reader.push(encoder.encode('hello\n{"a":1}\n[]\n\n{"type":"A"}\n'));
    reader.end();
    expect(reader.skipped).toBe(3);
  });
});

describe('NdjsonReader line limit', () => {
  /** A chunk line of exactly `bytes` bytes of UTF-8 (no newline), padded with `fill`. */
  function lineOf(bytes: number, fill: string): string {
    const prefix = '{"type":"T","pad":"';
    const suffix = '"}';
    const fillBytes = encoder.encode(fill).length;
    const room = bytes - prefix.length - suffix.length;
    expect(room % fillBytes).toBe(0);
    return `${prefix}${fill.repeat(room / fillBytes)}${suffix}`;
  }

  it('accepts a line of exactly MAX_LINE_BYTES', () => {
    const line = lineOf(MAX_LINE_BYTES, 'a');
    const items = new NdjsonReader().push(encoder.encode(`${line}\n`));
    expect(items).toHaveLength(1);
    expect(items[0]!.kind).toBe('chunk');
  });

  it.each([
    ['ASCII', 'a'],
    ['2-byte UTF-8', '\u00e9'],
    ['3-byte UTF-8', '\u20ac'],
  ])('throws LineTooLongError for a complete line just over the limit (%s)', (_name, fill) => {
    const width = encoder.encode(fill).length;
    let bytes = MAX_LINE_BYTES + 1;
    while ((bytes - 21) % width !== 0) bytes++;
    const over = lineOf(bytes, fill);
    expect(encoder.encode(over).length).toBe(bytes);
    expect(() => new NdjsonReader().push(encoder.encode(`${over}\n{"type":"A"}\n`))).toThrow(LineTooLongError);
    // The same line as the stream's last, with no newline.
    const reader = new NdjsonReader();
    expect(() => {
      reader.push(encoder.encode(over));
      reader.end();
    }).toThrow(LineTooLongError);
  });

  it('throws while the line is still partial, as soon as it passes the limit', () => {
    const reader = new NdjsonReader();
    const piece = encoder.encode('\u20ac'.repeat(21_846)); // 65,538 bytes
    let pushed = 0;
    let thrown: unknown;
    try {
      for (;;) {
        reader.push(piece);
        pushed += piece.length;
        // Never holding more than the limit: it must throw on the push that passes it.
        expect(pushed).toBeLessThanOrEqual(MAX_LINE_BYTES);
      }
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(LineTooLongError);
    expect(pushed + piece.length).toBeGreaterThan(MAX_LINE_BYTES);
    expect((thrown as LineTooLongError).bytes).toBeGreaterThan(MAX_LINE_BYTES);
  });

  it('does not throw for many short lines that add up to more than the limit', () => {
    const reader = new NdjsonReader();
    const piece = encoder.encode(`${'{"type":"A"}\n'.repeat(10_000)}`);
    let chunks = 0;
    for (let i = 0; i < 10; i++) chunks += reader.push(piece).length;
    expect(chunks).toBe(100_000);
  });
});
