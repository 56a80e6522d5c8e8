import { REDACTED } from './redact.ts';

/**
 * Redaction across deltas (SPEC "Redaction is streaming"). A model may stream
 * a secret one character per chunk, where no single line holds it, so each
 * text stream (a message's text, a reasoning message, a tool call's
 * arguments) is redacted as one text: a delta is released only up to where
 * no secret could still be completing, and the rest — at most (longest
 * secret − 1) characters — is held until the next delta decides it, or until
 * its stream ends, or before the run's terminal chunk.
 */

/** A chunk as the harness writes it: AG-UI JSON. */
export interface StreamChunk {
  type: string;
  [field: string]: unknown;
}

interface StreamKind {
  /** The field that names the stream. */
  id: string;
  /** The chunk type that ends the stream: its held text goes out just before it. */
  end: string | undefined;
  /** A field some adapters fill with the whole text so far; rewritten to what was released. */
  accumulated: string;
}

const STREAMS: Readonly<Record<string, StreamKind>> = {
  TEXT_MESSAGE_CONTENT: { id: 'messageId', end: 'TEXT_MESSAGE_END', accumulated: 'content' },
  REASONING_MESSAGE_CONTENT: { id: 'messageId', end: 'REASONING_MESSAGE_END', accumulated: 'content' },
  TOOL_CALL_ARGS: { id: 'toolCallId', end: 'TOOL_CALL_END', accumulated: 'args' },
  // Thinking as the @tanstack/ai 0.42 provider adapters stream it: STEP_FINISHED chunks with a delta.
  STEP_FINISHED: { id: 'stepId', end: undefined, accumulated: 'content' },
};

const END_OF: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(STREAMS).flatMap(([type, kind]) => (kind.end === undefined ? [] : [[kind.end, type]])),
);

interface OpenStream {
  kind: StreamKind;
  /** The stream's last chunk: the shape of the chunk that carries its held text out. */
  last: StreamChunk;
  held: string;
  /** Everything released so far, redacted: what an accumulated field may show. */
  released: string;
}

function isTerminal(type: string): boolean {
  return type === 'RUN_FINISHED' || type === 'RUN_ERROR';
}

export class StreamRedactor {
  readonly #secrets: readonly string[];
  readonly #maxHeld: number;
  /** By `type` + stream id, in the order the streams opened (flushes keep that order). */
  readonly #streams = new Map<string, OpenStream>();

  /** `secrets`: longest first, as `secretValues` gives them. */
  constructor(secrets: readonly string[]) {
    this.#secrets = secrets;
    this.#maxHeld = Math.max(0, ...secrets.map((secret) => secret.length - 1));
  }

  /** One chunk in; what may be written now out, in order (none while a whole delta is held). */
  push(chunk: StreamChunk): StreamChunk[] {
    if (this.#secrets.length === 0) return [chunk];
    const kind = STREAMS[chunk.type];
    if (kind !== undefined && typeof chunk.delta === 'string') return this.#onDelta(kind, chunk);
    const streamType = END_OF[chunk.type];
    if (streamType !== undefined) return [...this.#flushOne(`${streamType}\0${String(chunk[STREAMS[streamType]!.id])}`), chunk];
    if (isTerminal(chunk.type)) return [...this.flush(), chunk];
    return [chunk];
  }

  /** Every held text, as one last delta per stream (end of the run, or of the harness). */
  flush(): StreamChunk[] {
    return [...this.#streams.keys()].flatMap((key) => this.#flushOne(key));
  }

  #onDelta(kind: StreamKind, chunk: StreamChunk): StreamChunk[] {
    const key = `${chunk.type}\0${String(chunk[kind.id])}`;
    let stream = this.#streams.get(key);
    if (stream === undefined) this.#streams.set(key, (stream = { kind, last: chunk, held: '', released: '' }));
    stream.last = chunk;
    if (chunk.delta === '') {
      // A chunk that carries no text (a thinking step's closing chunk with its signature) goes out with what was held.
      const held = stream.held;
      stream.held = '';
      return [this.#release(stream, chunk, held)];
    }
    const text = this.#redact(stream.held + (chunk.delta as string));
    const hold = this.#heldLength(text);
    stream.held = text.slice(text.length - hold);
    const delta = text.slice(0, text.length - hold);
    // An empty delta is not a valid AG-UI content chunk: the whole delta waits instead.
    return delta === '' ? [] : [this.#release(stream, chunk, delta)];
  }

  #flushOne(key: string): StreamChunk[] {
    const stream = this.#streams.get(key);
    if (stream === undefined) return [];
    this.#streams.delete(key);
    return stream.held === '' ? [] : [this.#release(stream, stream.last, stream.held)];
  }

  #release(stream: OpenStream, chunk: StreamChunk, delta: string): StreamChunk {
    stream.released += delta;
    const out: StreamChunk = { ...chunk, delta };
    if (typeof chunk[stream.kind.accumulated] === 'string') out[stream.kind.accumulated] = stream.released;
    return out;
  }

  #redact(text: string): string {
    let out = text;
    for (const secret of this.#secrets) if (out.includes(secret)) out = out.replaceAll(secret, REDACTED);
    return out;
  }

  /** The longest tail of `text` that a secret starts with (and is longer than): it may still complete. */
  #heldLength(text: string): number {
    for (let length = Math.min(this.#maxHeld, text.length); length > 0; length--) {
      const tail = text.slice(text.length - length);
      if (this.#secrets.some((secret) => secret.length > length && secret.startsWith(tail))) return length;
    }
    return 0;
  }
}
