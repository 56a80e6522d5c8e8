import { closeSync, openSync, readSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SpoolStoreOptions {
  /** The runner's spool directory; this store's files are `<prefix>-<n>.ndjson` in it. */
  dir: string;
  prefix: string;
  /** Past this many bytes of lines in memory, they are written out as one segment file. */
  memoryBytes: number;
  /** Memory and disk together: the oldest segments are deleted past this. */
  maxBytes: number;
}

/** Whole lines, `count` of them from `firstSeq`, each followed by `\n`. */
interface Segment {
  readonly path: string;
  readonly firstSeq: number;
  readonly count: number;
  readonly bytes: number;
}

/** Where a reader stands: the next seq, and its byte offset in the segment that holds it (when known). */
export interface ReadPosition {
  seq: number;
  segment?: Segment;
  offset?: number;
}

/** Every read from disk is cut at a line end after about this many bytes. */
const READ_BATCH_BYTES = 64 * 1024;
const NEWLINE = 0x0a;

/**
 * One run's lines by seq: the newest in memory, older ones in segment files.
 *
 * Memory per run stays under `memoryBytes` plus one line, however long the run:
 * the tail is written out whole once it reaches the budget, and `spillAll`
 * empties it when the run ends. Disk stays under `maxBytes` plus one segment by
 * deleting the oldest segments; the newest line is always kept. File I/O is
 * synchronous on purpose: a segment is one page-cache write, and reads then
 * never race a pending write of the lines they need.
 */
export class SpoolStore {
  readonly #options: SpoolStoreOptions;
  /** A quarter of `maxBytes` at most, so trimming whole segments still keeps three quarters of the cap. */
  readonly #memoryBudget: number;
  readonly #segments: Segment[] = [];
  #segmentCount = 0;
  #diskBytes = 0;
  #tail: string[] = [];
  #tailSizes: number[] = [];
  #tailBytes = 0;
  #tailFirstSeq = 0;
  #released = false;

  constructor(options: SpoolStoreOptions) {
    this.#options = options;
    this.#memoryBudget = Math.max(1, Math.min(options.memoryBytes, Math.floor(options.maxBytes / 4)));
  }

  get firstSeq(): number {
    return this.#segments[0]?.firstSeq ?? this.#tailFirstSeq;
  }

  get lastSeq(): number {
    return this.#tailFirstSeq + this.#tail.length - 1;
  }

  get memoryBytes(): number {
    return this.#tailBytes;
  }

  get diskBytes(): number {
    return this.#diskBytes;
  }

  /** Throws if a segment cannot be written (a full disk): the caller ends the run. */
  push(line: string, size: number): void {
    if (this.#released) return;
    this.#tail.push(line);
    this.#tailSizes.push(size);
    this.#tailBytes += size + 1;
    if (this.#tailBytes >= this.#memoryBudget) this.spillAll();
  }

  /** Writes the in-memory lines out as one segment (`trim` is the caller's, once readers took what they could). */
  spillAll(): void {
    if (this.#released || this.#tail.length === 0) return;
    const path = join(this.#options.dir, `${this.#options.prefix}-${this.#segmentCount++}.ndjson`);
    writeFileSync(path, `${this.#tail.join('\n')}\n`);
    this.#segments.push({ path, firstSeq: this.#tailFirstSeq, count: this.#tail.length, bytes: this.#tailBytes });
    this.#diskBytes += this.#tailBytes;
    this.#tailFirstSeq += this.#tail.length;
    this.#tail = [];
    this.#tailSizes = [];
    this.#tailBytes = 0;
  }

  /** Deletes the oldest segments past `maxBytes`, never the newest one. */
  trim(): void {
    while (this.#segments.length > 1 && this.#diskBytes + this.#tailBytes > this.#options.maxBytes) this.#dropOldest();
  }

  /**
   * Up to about `maxBytes` of whole lines from `position.seq` on, joined with a
   * trailing `\n`, and advances `position`; `''` when the reader is at the end.
   * The caller checks `position.seq >= firstSeq` first.
   */
  read(position: ReadPosition, maxBytes = READ_BATCH_BYTES): string {
    if (position.seq > this.lastSeq || this.#released) return '';
    if (position.seq >= this.#tailFirstSeq) return this.#readTail(position, maxBytes);
    return this.#readDisk(position, maxBytes);
  }

  /** Deletes every file; later pushes and reads are no-ops. Idempotent. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    while (this.#segments.length > 0) this.#dropOldest();
    this.#tail = [];
    this.#tailSizes = [];
    this.#tailBytes = 0;
  }

  #readTail(position: ReadPosition, maxBytes: number): string {
    const from = position.seq - this.#tailFirstSeq;
    let to = from;
    let size = 0;
    while (to < this.#tail.length && (to === from || size < maxBytes)) size += this.#tailSizes[to++]! + 1;
    position.seq += to - from;
    position.segment = undefined;
    return `${this.#tail.slice(from, to).join('\n')}\n`;
  }

  #readDisk(position: ReadPosition, maxBytes: number): string {
    const segment = this.#segmentOf(position.seq);
    const fd = openSync(segment.path, 'r');
    try {
      if (position.segment !== segment || position.offset === undefined) {
        position.segment = segment;
        position.offset = offsetOfLine(fd, segment, position.seq - segment.firstSeq);
      }
      const { text, bytes, lines } = readLines(fd, position.offset, Math.min(maxBytes, segment.bytes - position.offset), segment.bytes);
      position.offset += bytes;
      position.seq += lines;
      if (position.seq >= segment.firstSeq + segment.count) position.segment = undefined;
      return text;
    } finally {
      closeSync(fd);
    }
  }

  /** Binary search: segments are contiguous and in seq order. */
  #segmentOf(seq: number): Segment {
    let low = 0;
    let high = this.#segments.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.#segments[mid]!.firstSeq <= seq) low = mid;
      else high = mid - 1;
    }
    return this.#segments[low]!;
  }

  #dropOldest(): void {
    const segment = this.#segments.shift()!;
    this.#diskBytes -= segment.bytes;
    try {
      unlinkSync(segment.path);
    } catch {
      // Already gone (the directory was removed at shutdown): nothing left to free.
    }
  }
}

/** The byte offset of line `index` in a segment: one scan, only when a reader starts mid-segment. */
function offsetOfLine(fd: number, segment: Segment, index: number): number {
  if (index === 0) return 0;
  const buffer = Buffer.allocUnsafe(READ_BATCH_BYTES);
  let seen = 0;
  for (let offset = 0; offset < segment.bytes; ) {
    const read = readSync(fd, buffer, 0, Math.min(buffer.length, segment.bytes - offset), offset);
    if (read === 0) break;
    for (let i = 0; i < read; i++) if (buffer[i] === NEWLINE && ++seen === index) return offset + i + 1;
    offset += read;
  }
  throw new Error(`spool segment ${segment.path} has fewer than ${index} lines`);
}

/** Whole lines from `offset`: at least one, then as many as fit in `wanted` bytes. */
function readLines(fd: number, offset: number, wanted: number, end: number): { text: string; bytes: number; lines: number } {
  let buffer = Buffer.allocUnsafe(Math.max(wanted, 1));
  let length = readSync(fd, buffer, 0, buffer.length, offset);
  let cut = buffer.lastIndexOf(NEWLINE, length - 1);
  // A line longer than the batch: read on until its end (segments always end with a newline).
  while (cut === -1 && offset + length < end) {
    const more = Buffer.allocUnsafe(Math.min(Math.max(buffer.length, READ_BATCH_BYTES), end - offset - length));
    const read = readSync(fd, more, 0, more.length, offset + length);
    if (read === 0) break;
    const found = more.indexOf(NEWLINE);
    buffer = Buffer.concat([buffer.subarray(0, length), more.subarray(0, read)]);
    if (found !== -1 && found < read) cut = length + found;
    length += read;
  }
  if (cut === -1) throw new Error('spool segment ends without a newline');
  const whole = buffer.subarray(0, cut + 1);
  let lines = 0;
  for (let i = whole.indexOf(NEWLINE); i !== -1; i = whole.indexOf(NEWLINE, i + 1)) lines++;
  return { text: whole.toString('utf8'), bytes: whole.length, lines };
}
