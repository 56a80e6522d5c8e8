import type { Writable } from 'node:stream';
import type { Redactor } from './redact.ts';
import { StreamRedactor, type StreamChunk } from './stream-redact.ts';

/**
 * What a harness writes: an AG-UI event as plain JSON. Kept structural because
 * the adapters' own `StreamChunk` types come from another `@tanstack/ai`
 * release than the relay's; on the wire both are the same JSON.
 */
export interface WireChunk {
  type: string;
  [field: string]: unknown;
}

/** One pipe write carries about this much; batches thousands of small chunks into one syscall. */
const BATCH_BYTES = 64 * 1024;

/**
 * Writes chunks as NDJSON to the harness process's stdout.
 *
 * Chunks written in the same tick go out as one write (flushed on
 * `setImmediate`, or at once past `BATCH_BYTES`), so a tight loop streams at
 * pipe speed while a paced one still sends each chunk as soon as it yields.
 * Every line passes the redactor, and text streams pass the streaming one
 * first (stream-redact.ts): no credential leaves in a chunk, nor spread over
 * several.
 */
export class ChunkWriter {
  readonly #out: Writable;
  readonly #redact: Redactor;
  readonly #stream: StreamRedactor;
  #parts: string[] = [];
  #size = 0;
  #scheduled = false;
  #drain: Promise<void> | undefined;

  /** `secrets`: the values to keep out of text streams, longest first (`secretValues`). */
  constructor(out: Writable, redact: Redactor, secrets: readonly string[] = []) {
    this.#out = out;
    this.#redact = redact;
    this.#stream = new StreamRedactor(secrets);
  }

  /**
   * Queues one chunk. Returns a promise only when the pipe is full: the caller
   * awaits it before producing more (`const wait = w.write(c); if (wait) await wait;`).
   */
  write(chunk: { readonly type: unknown }): Promise<void> | undefined {
    // Every chunk a harness writes has a string type (AG-UI); the cast only restates it.
    for (const out of this.#stream.push(chunk as StreamChunk)) this.#queue(out);
    if (this.#size >= BATCH_BYTES) return this.flush();
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        void this.flush();
      });
    }
    return this.#drain;
  }

  #queue(chunk: StreamChunk): void {
    const line = this.#redact(JSON.stringify(chunk));
    this.#parts.push(line);
    this.#size += line.length + 1;
  }

  /** Sends what is queued; resolves once the pipe can take more. */
  flush(): Promise<void> | undefined {
    if (this.#parts.length > 0) {
      const text = `${this.#parts.join('\n')}\n`;
      this.#parts = [];
      this.#size = 0;
      if (!this.#out.write(text) && this.#drain === undefined) {
        this.#drain = new Promise((resolve) => {
          this.#out.once('drain', () => {
            this.#drain = undefined;
            resolve();
          });
        });
      }
    }
    return this.#drain;
  }

  /** Flushes and waits until every byte was handed to the OS, so exiting afterwards loses nothing. */
  async close(): Promise<void> {
    // A harness that stops mid-message (a crash test, a stall) still gets its held text out.
    for (const out of this.#stream.flush()) this.#queue(out);
    await this.flush();
    await new Promise<void>((resolve) => this.#out.write('', () => resolve()));
  }
}
