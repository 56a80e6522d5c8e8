import { describe, expect, it } from 'vitest';
import { LineSplitter, LineTooLongError } from '../src/line-splitter.ts';

function feed(splitter: LineSplitter, parts: Buffer[]): string[] {
  return parts.flatMap((part) => splitter.push(part).lines);
}

describe('LineSplitter', () => {
  it('splits lines across arbitrary chunk boundaries, multi-byte characters included', () => {
    const text = '{"a":"héllo wörld 🚀"}\n{"b":"日本語"}\n{"c":1}\n';
    const bytes = Buffer.from(text);
    for (let cut = 1; cut < bytes.length; cut++) {
      const splitter = new LineSplitter(1024);
      expect(feed(splitter, [bytes.subarray(0, cut), bytes.subarray(cut)])).toEqual(['{"a":"héllo wörld 🚀"}', '{"b":"日本語"}', '{"c":1}']);
      expect(splitter.pendingBytes).toBe(0);
    }
  });

  it('takes one byte at a time', () => {
    const bytes = Buffer.from('{"x":"ü"}\n{"y":2}\n');
    const splitter = new LineSplitter(64);
    expect(feed(splitter, [...bytes].map((byte) => Buffer.from([byte])))).toEqual(['{"x":"ü"}', '{"y":2}']);
  });

  it('skips blank lines and strips CR', () => {
    const splitter = new LineSplitter(64);
    expect(feed(splitter, [Buffer.from('\n\n{"a":1}\r\n  \n{"b":2}\n')])).toEqual(['{"a":1}', '{"b":2}']);
  });

  it('reports each line size in UTF-8 bytes', () => {
    const splitter = new LineSplitter(64);
    expect(splitter.push(Buffer.from('ab\n€\n')).bytes).toEqual([2, 3]);
  });

  it('holds an unterminated tail until flushed', () => {
    const splitter = new LineSplitter(64);
    expect(splitter.push(Buffer.from('{"a":1}\n{"b"')).lines).toEqual(['{"a":1}']);
    expect(splitter.pendingBytes).toBe(4);
    expect(splitter.flush().toString()).toBe('{"b"');
    expect(splitter.pendingBytes).toBe(0);
  });

  it('refuses a line over the limit, terminated or not', () => {
    expect(() => new LineSplitter(8).push(Buffer.from('0123456789\n'))).toThrow(LineTooLongError);
    const splitter = new LineSplitter(8);
    splitter.push(Buffer.from('01234'));
    expect(() => splitter.push(Buffer.from('56789'))).toThrow(LineTooLongError);
  });
});
