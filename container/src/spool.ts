import type { ServerResponse } from 'node:http';
import { isStreamChunk, terminalChunkType, type RunnerRunState } from '../../src/protocol/index.ts';

export type EndedState = Exclude<RunnerRunState, 'running'>;

export interface SpoolOptions {
  keepAliveMs: number;
  /** Older lines are dropped past this many bytes (see `subscribe`'s `truncated`). */
  maxBytes: number;
  onEnd?: (state: EndedState) => void;
}

interface Subscriber {
  res: ServerResponse;
  /** The next seq this reader needs. */
  cursor: number;
  waitingDrain: boolean;
  wroteSinceTick: boolean;
}

/** Lines per `write()` are joined up to about this size: few syscalls, bounded copies. */
const WRITE_BATCH_BYTES = 64 * 1024;

/** Cheap substring test first: only candidate lines pay for a `JSON.parse`. */
export function isTerminalLine(line: string): boolean {
  if (!line.includes('"RUN_FINISHED"') && !line.includes('"RUN_ERROR"')) return false;
  try {
    const chunk: unknown = JSON.parse(line);
    return isStreamChunk(chunk) && terminalChunkType(chunk) !== null;
  } catch {
    return false;
  }
}

/**
 * One run's lines, in seq order, and the HTTP responses reading them.
 *
 * The spool itself is every reader's buffer: a reader is only a cursor, and a
 * slow one is paused on `drain` instead of queueing copies, so the harness is
 * never slowed down by a client and memory is bounded by `maxBytes` per run.
 * Invariants: line `i` is seq `i`; nothing is appended after the run ended;
 * a reader ends (cleanly) only once it has every line.
 *
 * However the run ended, readers end cleanly: a crashed harness's readers get
 * its partial lines and a normal end with no terminal chunk. The reader tells
 * a finished run from a lost one by its last line (a terminal chunk or not);
 * a stream that starts after the run ended says so in its run-state header
 * (`RUNNER_RUN_STATE_HEADER`). Only a runner shutdown cuts connections.
 */
export class RunSpool {
  readonly #options: SpoolOptions;
  #lines: string[] = [];
  #sizes: number[] = [];
  /** Seq of `#lines[0]`: above 0 once old lines were dropped for `maxBytes`. */
  #baseSeq = 0;
  #bytes = 0;
  #state: RunnerRunState = 'running';
  readonly #readers = new Set<Subscriber>();
  #keepAlive: NodeJS.Timeout | undefined;

  constructor(options: SpoolOptions) {
    this.#options = options;
  }

  get state(): RunnerRunState {
    return this.#state;
  }

  /** The oldest seq still held. */
  get firstSeq(): number {
    return this.#baseSeq;
  }

  get lastSeq(): number {
    return this.#baseSeq + this.#lines.length - 1;
  }

  /** Appends lines up to and including the first terminal chunk; returns whether one was seen. */
  append(lines: readonly string[], sizes: readonly number[]): boolean {
    if (this.#state !== 'running') return false;
    let terminal = false;
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!;
      this.#lines.push(line);
      this.#sizes.push(sizes[i]!);
      this.#bytes += sizes[i]! + 1;
      if (isTerminalLine(line)) {
        terminal = true;
        break;
      }
    }
    // Readers first: a reader that keeps up takes the lines before any are dropped.
    if (terminal) this.end('finished');
    else for (const reader of this.#readers) this.#pump(reader);
    if (this.#bytes > this.#options.maxBytes) this.#dropOldest();
    return terminal;
  }

  /** Idempotent: only the first end counts. Readers still get every spooled line, then end. */
  end(state: EndedState): boolean {
    if (this.#state !== 'running') return false;
    this.#state = state;
    this.#stopKeepAlive();
    for (const reader of this.#readers) this.#pump(reader);
    this.#options.onEnd?.(state);
    return true;
  }

  /** Streams the lines after `fromSeq` (exclusive) into `res`, then live ones. */
  subscribe(res: ServerResponse, fromSeq: number): 'ok' | 'truncated' {
    const cursor = Math.max(fromSeq + 1, 0);
    if (cursor < this.#baseSeq) return 'truncated';
    const reader: Subscriber = { res, cursor, waitingDrain: false, wroteSinceTick: false };
    this.#readers.add(reader);
    res.once('close', () => this.#remove(reader));
    this.#pump(reader);
    if (this.#readers.has(reader)) this.#startKeepAlive();
    return 'ok';
  }

  /** Cuts every reader's connection (runner shutdown): they see the stream break, not end. */
  destroyReaders(): void {
    for (const reader of this.#readers) reader.res.destroy();
    this.#readers.clear();
    this.#stopKeepAlive();
  }

  #pump(reader: Subscriber): void {
    if (reader.waitingDrain || reader.res.destroyed) return;
    const last = this.lastSeq;
    while (reader.cursor <= last) {
      const from = reader.cursor - this.#baseSeq;
      let to = from;
      let size = 0;
      while (to <= last - this.#baseSeq && (to === from || size < WRITE_BATCH_BYTES)) size += this.#sizes[to++]! + 1;
      const text = `${this.#lines.slice(from, to).join('\n')}\n`;
      reader.cursor += to - from;
      reader.wroteSinceTick = true;
      if (!reader.res.write(text)) {
        reader.waitingDrain = true;
        reader.res.once('drain', () => {
          reader.waitingDrain = false;
          this.#pump(reader);
        });
        return;
      }
    }
    if (this.#state !== 'running') {
      this.#remove(reader);
      reader.res.end();
    }
  }

  #remove(reader: Subscriber): void {
    this.#readers.delete(reader);
    if (this.#readers.size === 0) this.#stopKeepAlive();
  }

  /** Drops to three quarters of the cap at once so the splice cost is amortised over many appends. */
  #dropOldest(): void {
    const target = Math.floor(this.#options.maxBytes * 0.75);
    let drop = 0;
    while (this.#bytes > target && drop < this.#lines.length - 1) this.#bytes -= this.#sizes[drop++]! + 1;
    this.#lines.splice(0, drop);
    this.#sizes.splice(0, drop);
    this.#baseSeq += drop;
    // A reader behind the new start can never be served without a gap: cut it so it reattaches and learns why.
    for (const reader of this.#readers) {
      if (reader.cursor < this.#baseSeq) {
        this.#remove(reader);
        reader.res.destroy();
      }
    }
  }

  /** One timer per run, not per reader; a reader that got bytes since the last tick needs no blank line. */
  #startKeepAlive(): void {
    if (this.#keepAlive !== undefined || this.#state !== 'running') return;
    this.#keepAlive = setInterval(() => {
      for (const reader of this.#readers) {
        if (!reader.wroteSinceTick && !reader.waitingDrain && !reader.res.destroyed) reader.res.write('\n');
        reader.wroteSinceTick = false;
      }
    }, this.#options.keepAliveMs);
    this.#keepAlive.unref();
  }

  #stopKeepAlive(): void {
    if (this.#keepAlive === undefined) return;
    clearInterval(this.#keepAlive);
    this.#keepAlive = undefined;
  }
}
