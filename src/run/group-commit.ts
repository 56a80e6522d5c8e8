import { terminalChunkType } from '../protocol/index.ts';
import type { AcceptResult, IncomingChunk } from './driver.ts';

/**
 * Group commit for the runner's chunks. Storage is billed per row written, so
 * chunks wait briefly and are written together (one row per flush). The wait
 * adapts: short while clients watch (they see a chunk only once it is
 * durable), long when nobody does. Holding chunks in memory is safe because
 * the runner spools them: after a restart the driver reattaches from the
 * durable `lastSeq` and gets them again.
 */

/** With clients attached: ~9 chunks per row at a 200 chunks/s token pace, and a bounded wait. */
export const LIVE_WINDOW_MS = 45;
/** Nobody watching: cost wins; a few hundred chunks per row at token pace. */
export const IDLE_WINDOW_MS = 1_000;
/** Flush early past this much text: keeps memory and the row well under the 2 MB row limit. */
export const MAX_PENDING_CHARS = 256 * 1024;

export class GroupCommit {
  readonly #write: (chunks: IncomingChunk[]) => AcceptResult;
  readonly #windowMs: () => number;
  readonly #onClosed: (result: AcceptResult) => void;
  #pending: IncomingChunk[] = [];
  #chars = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param write appends chunks durably (the run object's `accept`)
   * @param windowMs how long a chunk may wait, asked at the first chunk of a batch
   * @param onClosed called when a timed flush finds the run terminal or rejected
   */
  constructor(write: (chunks: IncomingChunk[]) => AcceptResult, windowMs: () => number, onClosed: (result: AcceptResult) => void) {
    this.#write = write;
    this.#windowMs = windowMs;
    this.#onClosed = onClosed;
  }

  /** Queues chunks; a terminal chunk or a full batch flushes at once and its result is returned. */
  add(chunks: readonly IncomingChunk[]): AcceptResult | 'pending' {
    for (const chunk of chunks) {
      this.#pending.push(chunk);
      this.#chars += chunk.raw.length;
      // The end of a run is never held back.
      if (terminalChunkType(chunk.chunk)) return this.flush();
    }
    if (this.#chars >= MAX_PENDING_CHARS) return this.flush();
    if (this.#pending.length > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined;
        const result = this.flush();
        if (result === 'terminal' || result === 'rejected') this.#onClosed(result);
      }, this.#windowMs());
    }
    return 'pending';
  }

  /** Writes whatever is pending now. */
  flush(): AcceptResult {
    this.#clearTimer();
    if (this.#pending.length === 0) return 'open';
    const batch = this.#pending;
    this.#pending = [];
    this.#chars = 0;
    return this.#write(batch);
  }

  /** Drops pending chunks (the run was cancelled, or the pump is going away and the runner still has them). */
  discard(): void {
    this.#clearTimer();
    this.#pending = [];
    this.#chars = 0;
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
