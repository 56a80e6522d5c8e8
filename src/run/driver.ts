import type { StreamChunk } from '@tanstack/ai';
import { isRunnerRunState, relayRunError, RUNNER_RUN_STATE_HEADER, terminalChunkType, type RelayRunErrorCode, type RunnerRunRequest } from '../protocol/index.ts';
import { LineTooLongError, NdjsonReader } from '../runner/ndjson.ts';
import type { RunnerTransport } from '../runner/transport.ts';

/** A chunk as read from the runner: its JSON text (stored as is) and its parsed form. */
export interface IncomingChunk {
  raw: string;
  chunk: StreamChunk;
}

/**
 * What the driver hands on: the next chunks in seq order, and whether the
 * last of them ends the run (`RUN_FINISHED`, or a `RUN_ERROR` from the
 * harness or written here because the runner failed). Nothing follows a
 * terminal batch.
 */
export interface Batch {
  chunks: IncomingChunk[];
  terminal: boolean;
}

/**
 * How a read ended without a terminal batch: `stopped` (its signal aborted,
 * or the consumer stopped pulling), or `retry` — a reattach found the runner
 * unreachable or restarting, and the run should be reattached later rather
 * than failed while the runner may still hold it.
 */
export type ReadEnd = 'stopped' | 'retry' | 'terminal';

/**
 * Group commit. Storage is billed per row written, so chunks wait briefly and
 * are handed on together (one row per batch). The wait adapts: short while
 * clients watch (they see a chunk only once it is durable), long when nobody
 * does. Holding chunks in memory is safe because the runner spools them: after
 * a restart the driver reattaches from the durable `lastSeq` and gets them again.
 */
/** With clients attached: ~9 chunks per row at a 200 chunks/s token pace, and a bounded wait. */
export const LIVE_WINDOW_MS = 45;
/** Nobody watching: cost wins; a few hundred chunks per row at token pace. */
export const IDLE_WINDOW_MS = 1_000;
/** Hand on early past this much text: keeps memory and the row well under the 2 MB row limit. */
export const MAX_PENDING_CHARS = 256 * 1024;

export interface ReadPlan {
  runId: string;
  threadId: string;
  /** `start` posts the request to the runner; `reattach` resumes after the durable cursor. */
  mode: 'start' | 'reattach';
  /** The runner request, asked for only when the run is (re)started; `null` when there is none. */
  request(): Promise<RunnerRunRequest | null>;
  /** The durable cursor: the last seq stored. Read again at every (re)attach. */
  lastSeq(): number;
  /** Whether clients watch live, asked when a batch opens: it sets how long chunks may wait. */
  watched(): boolean;
  signal: AbortSignal;
}

type StreamEnd = 'terminal' | 'ended' | 'stopped';

/** The terminal batch for a run the relay ends itself: one synthesized `RUN_ERROR` saying why. */
export function failureBatch(runId: string, threadId: string, code: RelayRunErrorCode, message: string): Batch {
  const chunk = relayRunError(runId, threadId, code, message);
  return { chunks: [{ raw: JSON.stringify(chunk), chunk }], terminal: true };
}

const WINDOW_DUE = Symbol('window due');

/**
 * Reads one run from the runner and turns its NDJSON stream into batches —
 * and does nothing else: it stores nothing and decides no status. Every way
 * a runner can fail ends as a terminal batch whose last chunk is a
 * synthesized `RUN_ERROR`, so clients see why. It never throws.
 *
 * The read is pulled (an async generator): the next batch is read only once
 * the consumer asked for it, so a batch is always applied before the cursor
 * is read again. It can die with the object at any moment (eviction, deploy);
 * that is safe because the runner spools the run and a `reattach` resumes
 * from the durable `lastSeq`.
 */
export class Driver {
  readonly #transport: RunnerTransport;
  #lastByteAt = 0;

  constructor(transport: RunnerTransport) {
    this.#transport = transport;
  }

  /** Epoch ms of the last byte read from the runner (keep-alive lines included). */
  get lastByteAt(): number {
    return this.#lastByteAt;
  }

  async *read(plan: ReadPlan): AsyncGenerator<Batch, ReadEnd, void> {
    const { signal } = plan;
    const failure = (code: RelayRunErrorCode, message: string) => failureBatch(plan.runId, plan.threadId, code, message);
    let mode = plan.mode;
    try {
      while (!signal.aborted) {
        const from = plan.lastSeq();
        const request = mode === 'start' ? await plan.request() : null;
        if (mode === 'start' && !request) {
          yield failure('runner_lost', 'This run has no runner request to start from, and its runner does not know it.');
          return 'terminal';
        }
        let response: Response;
        try {
          response = request ? await this.#transport.start(request, signal) : await this.#transport.reattach(plan.runId, from, signal);
        } catch (error) {
          if (signal.aborted) return 'stopped';
          // A container restarting refuses connections for a while; only a new run fails at once.
          if (mode === 'reattach') return 'retry';
          yield failure('runner_unavailable', `The harness runner could not be reached (${describe(error)}). Check RUNNER_URL or the container binding, then start a new run.`);
          return 'terminal';
        }
        this.#lastByteAt = Date.now();
        if (signal.aborted) {
          void response.body?.cancel().catch(() => undefined);
          return 'stopped';
        }
        if (!response.ok) {
          if (mode === 'reattach' && response.status === 404) {
            void response.body?.cancel().catch(() => undefined);
            // The object died before the runner ever saw the run: start it now.
            if (from === -1) {
              mode = 'start';
              continue;
            }
            yield failure('runner_lost', 'The runner no longer knows this run (it restarted or dropped the run), so the rest of its output is lost.');
            return 'terminal';
          }
          if (mode === 'reattach' && response.status >= 500) {
            void response.body?.cancel().catch(() => undefined);
            return 'retry';
          }
          const detail = (await response.text().catch(() => '')).slice(0, 500);
          // 502/503/504 come from whatever fronts a runner that is not there.
          const code = response.status >= 502 && response.status <= 504 ? 'runner_unavailable' : 'runner_error';
          yield failure(code, `The harness runner answered ${response.status}${detail ? `: ${detail}` : ''}.`);
          return 'terminal';
        }
        if (!response.body) {
          yield failure('runner_error', 'The harness runner answered with an empty body.');
          return 'terminal';
        }
        // The run's state when the runner answered: once it is no longer running,
        // this stream holds every line the harness will ever write.
        const state = response.headers.get(RUNNER_RUN_STATE_HEADER);
        const harnessGone = isRunnerRunState(state) && state !== 'running';
        const end = yield* this.#batches(response.body, plan);
        if (end === 'stopped') return 'stopped';
        if (end === 'terminal') return 'terminal';
        if (end instanceof LineTooLongError) {
          yield failure('chunk_too_large', `The harness wrote a chunk over 1 MiB (${end.bytes} bytes or more); the run was stopped rather than store a partial chunk.`);
          return 'terminal';
        }
        // The stream ended with no terminal chunk. The runner's header, or a
        // reattach that brings nothing new, tells a dead harness from a dropped connection.
        if (harnessGone || (mode === 'reattach' && plan.lastSeq() === from)) {
          yield failure('runner_lost', 'The harness stopped without finishing the run: its stream ended with no RUN_FINISHED or RUN_ERROR.');
          return 'terminal';
        }
        mode = 'reattach';
      }
      return 'stopped';
    } catch (error) {
      if (signal.aborted) return 'stopped';
      yield failure('runner_error', `The relay failed while reading the runner: ${describe(error)}.`);
      return 'terminal';
    }
  }

  /** One response body as batches: a batch is handed on when its window is due, it is large, or it ends the run. */
  async *#batches(body: ReadableStream<Uint8Array>, plan: ReadPlan): AsyncGenerator<Batch, StreamEnd | LineTooLongError, void> {
    const reader = body.getReader();
    const lines = new NdjsonReader();
    let pending: IncomingChunk[] = [];
    let chars = 0;
    let due: { promise: Promise<typeof WINDOW_DUE>; timer: ReturnType<typeof setTimeout> } | undefined;
    let read: Promise<ReadableStreamReadResult<Uint8Array>> | undefined;
    const take = (terminal: boolean): Batch => {
      if (due) clearTimeout(due.timer);
      due = undefined;
      const batch = { chunks: pending, terminal };
      pending = [];
      chars = 0;
      return batch;
    };
    try {
      for (;;) {
        read ??= reader.read();
        let next: ReadableStreamReadResult<Uint8Array> | typeof WINDOW_DUE;
        try {
          next = due ? await Promise.race([read, due.promise]) : await read;
        } catch {
          if (plan.signal.aborted) return 'stopped';
          // The connection broke: what was read is good, the rest comes from a reattach.
          if (pending.length > 0) yield take(false);
          return 'ended';
        }
        if (plan.signal.aborted) return 'stopped';
        if (next === WINDOW_DUE) {
          yield take(false);
          continue;
        }
        read = undefined;
        this.#lastByteAt = Date.now();
        let items;
        try {
          items = next.done ? lines.end() : lines.push(next.value);
        } catch (error) {
          if (!(error instanceof LineTooLongError)) throw error;
          if (pending.length > 0) yield take(false);
          return error;
        }
        for (const item of items) {
          if (item.kind !== 'chunk') continue;
          pending.push(item);
          chars += item.raw.length;
          // The end of a run is never held back, and nothing after it belongs to the run.
          if (terminalChunkType(item.chunk)) {
            yield take(true);
            return 'terminal';
          }
        }
        if (next.done) {
          if (pending.length > 0) yield take(false);
          return 'ended';
        }
        if (chars >= MAX_PENDING_CHARS) yield take(false);
        else if (pending.length > 0 && !due) {
          let timer!: ReturnType<typeof setTimeout>;
          const promise = new Promise<typeof WINDOW_DUE>((resolve) => (timer = setTimeout(() => resolve(WINDOW_DUE), plan.watched() ? LIVE_WINDOW_MS : IDLE_WINDOW_MS)));
          due = { promise, timer };
        }
      }
    } finally {
      // Whatever is still pending is in the runner's spool; a reattach replays it.
      if (due) clearTimeout(due.timer);
      reader.cancel().catch(() => undefined);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
