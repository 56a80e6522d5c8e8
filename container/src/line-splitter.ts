/** A line (or the unterminated tail) grew past the limit; the stream cannot be framed any more. */
export class LineTooLongError extends Error {
  readonly bytes: number;

  constructor(bytes: number, limit: number) {
    super(`a line of at least ${bytes} bytes exceeds the ${limit}-byte limit`);
    this.name = 'LineTooLongError';
    this.bytes = bytes;
  }
}

export interface SplitLines {
  /** Complete, non-blank lines without their terminator. */
  lines: string[];
  /** UTF-8 size of each line in `lines`, same order. */
  bytes: number[];
}

const NEWLINE = 0x0a;

/**
 * Splits a byte stream into `\n`-terminated lines.
 *
 * Works on bytes, not decoded text: `0x0A` never occurs inside a multi-byte
 * UTF-8 sequence, so cutting at newlines first and decoding whole lines after
 * can never split a character, however the pipe chunks the data. Each push
 * decodes its complete lines with one `toString` and one `split`, which keeps
 * the hot path cheap when a harness writes thousands of small lines per read.
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /** Bytes held after the last newline: a line still being written. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** @throws LineTooLongError when a line is longer than the limit. */
  push(data: Buffer): SplitLines {
    const last = data.lastIndexOf(NEWLINE);
    if (last === -1) {
      this.#hold(data);
      return { lines: [], bytes: [] };
    }
    const head = data.subarray(0, last);
    const complete = this.#pending.length === 0 ? head : Buffer.concat([...this.#pending, head]);
    this.#pending = [];
    this.#pendingBytes = 0;
    if (last + 1 < data.length) this.#hold(data.subarray(last + 1));
    return this.#decode(complete);
  }

  /** The unterminated tail, if any; the splitter is empty afterwards. */
  flush(): Buffer {
    const tail = Buffer.concat(this.#pending);
    this.#pending = [];
    this.#pendingBytes = 0;
    return tail;
  }

  #hold(data: Buffer): void {
    this.#pendingBytes += data.length;
    if (this.#pendingBytes > this.#maxLineBytes) throw new LineTooLongError(this.#pendingBytes, this.#maxLineBytes);
    // Copy: the caller's buffer may be a slice of a pooled allocation.
    this.#pending.push(Buffer.from(data));
  }

  #decode(complete: Buffer): SplitLines {
    const lines: string[] = [];
    const bytes: number[] = [];
    for (let raw of complete.toString('utf8').split('\n')) {
      if (raw.endsWith('\r')) raw = raw.slice(0, -1);
      if (raw.trim() === '') continue;
      const size = Buffer.byteLength(raw, 'utf8');
      if (size > this.#maxLineBytes) throw new LineTooLongError(size, this.#maxLineBytes);
      lines.push(raw);
      bytes.push(size);
    }
    return { lines, bytes };
  }
}
