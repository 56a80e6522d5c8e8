import type { StreamChunk } from '@tanstack/ai';
import { isStreamChunk } from '../protocol/index.ts';

/** SPEC: a runner line over 1 MiB fails the run (`chunk_too_large`); nothing buffers beyond it. */
export const MAX_LINE_BYTES = 1_048_576;

export type NdjsonItem =
  | { kind: 'chunk'; raw: string; chunk: StreamChunk }
  /** A blank line: the runner's keep-alive. */
  | { kind: 'keepalive' }
  /** A line that is not a JSON chunk (a banner, a log line): skipped and counted, never stored. */
  | { kind: 'skipped' };

export class LineTooLongError extends Error {
  constructor(readonly bytes: number) {
    super(`a runner line exceeded ${MAX_LINE_BYTES} bytes (at least ${bytes})`);
    this.name = 'LineTooLongError';
  }
}

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  // Cheap upper bound first: a UTF-16 unit is at most 3 bytes of UTF-8.
  return text.length * 3 <= MAX_LINE_BYTES ? text.length : encoder.encode(text).length;
}

/**
 * Splits a byte stream into NDJSON items. Correct across arbitrary chunk
 * boundaries (including a multi-byte character or a CRLF split in two), and
 * bounded: a partial line longer than `MAX_LINE_BYTES` throws instead of
 * growing the buffer.
 */
export class NdjsonReader {
  readonly #decoder = new TextDecoder();
  #pending = '';
  skipped = 0;

  push(bytes: Uint8Array): NdjsonItem[] {
    return this.#split(this.#pending + this.#decoder.decode(bytes, { stream: true }), false);
  }

  /** The stream ended: a last line without a newline still counts. */
  end(): NdjsonItem[] {
    return this.#split(this.#pending + this.#decoder.decode(), true);
  }

  #split(text: string, final: boolean): NdjsonItem[] {
    const items: NdjsonItem[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      this.#line(text.slice(start, nl), items);
      start = nl + 1;
    }
    const rest = text.slice(start);
    if (final) {
      this.#pending = '';
      if (rest !== '') this.#line(rest, items);
    } else {
      const bytes = utf8Length(rest);
      if (bytes > MAX_LINE_BYTES) throw new LineTooLongError(bytes);
      this.#pending = rest;
    }
    return items;
  }

  #line(line: string, items: NdjsonItem[]): void {
    const bytes = utf8Length(line);
    if (bytes > MAX_LINE_BYTES) throw new LineTooLongError(bytes);
    const text = line.trim();
    if (text === '') {
      items.push({ kind: 'keepalive' });
      return;
    }
    let value: unknown;
    try {
      value = text.startsWith('{') ? JSON.parse(text) : undefined;
    } catch {
      value = undefined;
    }
    if (isStreamChunk(value)) {
      // A raw CR is legal JSON whitespace but would split an SSE `data:` line.
      items.push({ kind: 'chunk', raw: text.includes('\r') ? JSON.stringify(value) : text, chunk: value });
    } else {
      this.skipped++;
      items.push({ kind: 'skipped' });
    }
  }
}
