import type { ServerResponse } from 'node:http';
import { isStreamChunk, terminalChunkType, type RunnerRunState } from '../../src/protocol/index.ts';
import { SpoolStore, type ReadPosition, type SpoolStoreOptions } from './spool-store.ts';

export type EndedState = Exclude<RunnerRunState, 'running'>;

/** `maxBytes`: older lines are dropped past it (see `subscribe`'s `truncated`); `memoryBytes`: the rest is on disk. */
export interface SpoolOptions extends SpoolStoreOptions {
  keepAliveMs: number;
  onEnd?: (state: EndedState) => void;
  /** A segment could not be written (a full disk): the run has been ended `crashed`; stop its harness. */
  onSpillError?: (error: unknown) => void;
}

interface Subscriber {
  res: ServerResponse;
  /** `seq` is the next seq this reader needs. */
  position: ReadPosition;
  waitingDrain: boolean;
  wroteSinceTick: boolean;
}

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
 * never slowed down by a client. Lines live in a `SpoolStore`: the newest in
 * memory (`memoryBytes`), the rest on disk (`maxBytes`), all of it on disk once
 * the run ended, and nothing once `release` was called.
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
  readonly #store: SpoolStore;
  #state: RunnerRunState = 'running';
  readonly #readers = new Set<Subscriber>();
  #keepAlive: NodeJS.Timeout | undefined;

  constructor(options: SpoolOptions) {
    this.#options = options;
    this.#store = new SpoolStore(options);
  }

  get state(): RunnerRunState {
    return this.#state;
  }

  /** The oldest seq still held: above 0 once old lines were dropped for `maxBytes`. */
  get firstSeq(): number {
    return this.#store.firstSeq;
  }

  get lastSeq(): number {
    return this.#store.lastSeq;
  }

  /** Bytes of lines held in the heap and on disk right now. */
  get held(): { memoryBytes: number; diskBytes: number } {
    return { memoryBytes: this.#store.memoryBytes, diskBytes: this.#store.diskBytes };
  }

  /** Appends lines up to and including the first terminal chunk; returns whether one was seen. */
  append(lines: readonly string[], sizes: readonly number[]): boolean {
    if (this.#state !== 'running') return false;
    let terminal = false;
    try {
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i]!;
        this.#store.push(line, sizes[i]!);
        if (isTerminalLine(line)) {
          terminal = true;
          break;
        }
      }
    } catch (error) {
      this.end('crashed');
      this.#options.onSpillError?.(error);
      return false;
    }
    // Readers first: a reader that keeps up takes the lines before any are dropped.
    if (terminal) this.end('finished');
    else for (const reader of this.#readers) this.#pump(reader);
    this.#store.trim();
    this.#cutReadersBehind();
    return terminal;
  }

  /** Idempotent: only the first end counts. Readers still get every spooled line, then end. */
  end(state: EndedState): boolean {
    if (this.#state !== 'running') return false;
    this.#state = state;
    this.#stopKeepAlive();
    try {
      this.#store.spillAll();
    } catch {
      // Then the last lines stay in memory (at most `memoryBytes`) until the run is released.
    }
    for (const reader of this.#readers) this.#pump(reader);
    this.#store.trim();
    this.#cutReadersBehind();
    this.#options.onEnd?.(state);
    return true;
  }

  /** Streams the lines after `fromSeq` (exclusive) into `res`, then live ones. */
  subscribe(res: ServerResponse, fromSeq: number): 'ok' | 'truncated' {
    const seq = Math.max(fromSeq + 1, 0);
    if (seq < this.firstSeq) return 'truncated';
    const reader: Subscriber = { res, position: { seq }, waitingDrain: false, wroteSinceTick: false };
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

  /** The run is forgotten: cuts any reader still here and deletes every line, in memory and on disk. */
  release(): void {
    this.destroyReaders();
    this.#store.release();
  }

  #pump(reader: Subscriber): void {
    if (reader.waitingDrain || reader.res.destroyed) return;
    while (reader.position.seq <= this.lastSeq) {
      let text: string;
      try {
        text = this.#store.read(reader.position);
      } catch {
        text = '';
      }
      // Unreadable (a segment file removed under it) or released: a cut, never a gap or a busy loop.
      if (text === '') {
        this.#remove(reader);
        reader.res.destroy();
        return;
      }
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

  /** A reader behind the oldest line kept can never be served without a gap: cut it so it reattaches and learns why. */
  #cutReadersBehind(): void {
    const first = this.firstSeq;
    for (const reader of this.#readers) {
      if (reader.position.seq < first) {
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
