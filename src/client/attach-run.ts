import type { StreamChunk } from '@tanstack/ai';
import { attachSubprotocols, isEventFrame, isStatusFrame, parseTailFrame, type PendingToolCall, type RunView, type TailFrame } from '../protocol/index.ts';
import { Backoff, sleep, type BackoffOptions } from './backoff.ts';
import { readRunRecord, RunNotFoundError, runUrl } from './run-record.ts';
import { answerToolCall, PendingToolCalls } from './tool-calls.ts';

/**
 * `connecting` (first attempt) → `replaying` (catching up on the backlog) →
 * `live` → `closed`; `reconnecting` between attempts.
 *
 * "Backlog" is measured, not guessed: every connect also reads the run record
 * (`GET /runs/:id`), and the client is `replaying` until it has delivered that
 * record's `lastSeq`, then `live`. If the record cannot be read, `live` on open.
 */
export type AttachState = 'connecting' | 'replaying' | 'live' | 'reconnecting' | 'closed';

/** The part of the WebSocket API used here: the browser's, Node 22's global, or `ws`'s. */
export interface WebSocketLike {
  close(code?: number, reason?: string): void;
  addEventListener(type: 'open' | 'error', listener: () => void): void;
  addEventListener(type: 'message', listener: (event: { data: unknown }) => void): void;
  addEventListener(type: 'close', listener: (event: { code: number; reason: string }) => void): void;
}
export type WebSocketConstructor = new (url: string, protocols?: string[]) => WebSocketLike;

export interface AttachRunOptions {
  /** Where the relay is, e.g. `https://relay.example.com` (a path prefix is kept). */
  baseUrl: string;
  runId: string;
  /** The last seq you already have (exclusive); `-1`, the default, for everything. */
  fromSeq?: number;
  /** Each event exactly once, in seq order, across reconnects. */
  onChunk: (chunk: StreamChunk, seq: number) => void;
  /** The terminal record, once, after the last chunk. */
  onStatus?: (record: RunView) => void;
  onState?: (state: AttachState) => void;
  /**
   * The run's client tool calls waiting for an answer, each time the list
   * changes: a call asked, or answered (here, in another tab, or by timeout).
   */
  onPendingToolCalls?: (calls: PendingToolCall[]) => void;
  /** Aborting stops the tail; `done` rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * The run's `attachToken`: offered on the WebSocket as a subprotocol (it
   * stays out of URLs and so out of request logs), and as `?token=` on the
   * one `GET /runs/:id` the client makes.
   */
  token?: string;
  /** Default: the global `WebSocket`. In Node 20, pass `ws`'s `WebSocket`. */
  WebSocketImpl?: WebSocketConstructor;
  /** Default: the global `fetch`. Used for the run record (404 and backlog detection). */
  fetchImpl?: typeof fetch;
  /** Reconnect delays; default 250 ms doubling to 10 s, full jitter. */
  backoff?: BackoffOptions;
}

export interface AttachedRun {
  /** Resolves with the terminal record once its status frame arrives; rejects for an unknown run (`RunNotFoundError`), an abort, `close()`, an unreadable frame, or what `onChunk`/`onStatus` threw. */
  done: Promise<RunView>;
  /** The last seq delivered to `onChunk` (`fromSeq` before the first): the `fromSeq` to resume from later. */
  lastSeq(): number;
  /** Stops the tail; `done` rejects with an `AbortError`. */
  close(): void;
  /** The client tool calls waiting for an answer, as of the last chunk delivered. */
  pendingToolCalls(): PendingToolCall[];
  /**
   * Answers a client tool call with its output (`POST /runs/:runId/tool-results`,
   * with this tail's token). Resolves with the record; rejects with a
   * `ToolAnswerError` (`already_answered` when another tab was first).
   */
  respond(toolCallId: string, output: unknown): Promise<RunView>;
  /** Answers a client tool call with an error the harness shows its model; the run goes on. */
  reject(toolCallId: string, error: string): Promise<RunView>;
}

/**
 * The client's own close codes, in the private 4000–4999 range (browsers only
 * let a client send 1000 or 3000–4999): a seq gap (reconnect from the last
 * seq), and a frame it cannot read.
 */
const CLIENT_CLOSE = { gap: 4000, badFrame: 4001 } as const;

type Outcome = { kind: 'done'; record: RunView } | { kind: 'retry'; progressed: boolean } | { kind: 'not_found' } | { kind: 'fatal'; error: unknown } | { kind: 'stopped' };

/**
 * Attaches to a run's WebSocket tail and delivers every chunk exactly once,
 * reconnecting on its own (exponential backoff, full jitter) from the last
 * seq it delivered. Works in browsers and in Node 22 (global `WebSocket`).
 *
 * @example
 * ```ts
 * import { attachRun } from '/assets/client.js'; // the browser bundle; in TypeScript: src/client/index.ts
 *
 * const tail = attachRun({
 *   baseUrl: 'http://127.0.0.1:8787',
 *   runId,
 *   fromSeq: saved ?? -1,
 *   onChunk(chunk, seq) {
 *     if (chunk.type === 'TEXT_MESSAGE_CONTENT') output.textContent += chunk.delta;
 *     saved = seq;
 *   },
 *   onState: (state) => (badge.textContent = state),
 * });
 * const record = await tail.done; // { status: 'completed', lastSeq, ... }
 * ```
 */
export function attachRun(options: AttachRunOptions): AttachedRun {
  const { runId, onChunk } = options;
  const fromSeq = options.fromSeq ?? -1;
  if (!Number.isSafeInteger(fromSeq) || fromSeq < -1) throw new RangeError(`fromSeq must be an integer >= -1; got ${fromSeq}.`);
  const WebSocketImpl = options.WebSocketImpl ?? (globalThis.WebSocket as unknown as WebSocketConstructor | undefined);
  const fetchImpl = options.fetchImpl ?? globalThis.fetch.bind(globalThis);
  const stop = new AbortController();
  // abort(undefined) makes the reason a DOMException named AbortError.
  const onAbort = () => stop.abort(options.signal?.reason);
  if (options.signal?.aborted) onAbort();
  else options.signal?.addEventListener('abort', onAbort, { once: true });

  let last = fromSeq;
  let state: AttachState | null = null;
  const pending = new PendingToolCalls();
  const pendingChanged = (changed: boolean) => {
    if (changed) options.onPendingToolCalls?.(pending.list());
  };
  const setState = (next: AttachState) => {
    if (next === state) return;
    state = next;
    options.onState?.(next);
  };

  function connectOnce(): Promise<Outcome> {
    return new Promise<Outcome>((settle) => {
      let ws: WebSocketLike;
      try {
        if (!WebSocketImpl) throw new Error('No WebSocket implementation: pass WebSocketImpl (e.g. `ws`) on Node 20.');
        ws =
          options.token === undefined
            ? new WebSocketImpl(runUrl(options, `/ws?fromSeq=${last}`))
            : new WebSocketImpl(runUrl({ ...options, token: undefined }, `/ws?fromSeq=${last}`), attachSubprotocols(options.token));
      } catch (error) {
        return settle({ kind: 'fatal', error });
      }
      let opened = false;
      let notFound = false;
      let progressed = false;
      /** Set once this connection is being dropped: its late frames and record read change nothing. */
      let ignoring = false;
      let status: RunView | null = null;
      let fatal: unknown = null;
      /** `lastSeq` as of this connect; `undefined` until the record is read, `null` if it cannot be. */
      let target: number | null | undefined;
      const phase = () => {
        if (opened && !ignoring) setState(target === undefined || (target !== null && last < target) ? 'replaying' : 'live');
      };
      const drop = (code: number, reason: string) => {
        ignoring = true;
        try {
          ws.close(code, reason);
        } catch {
          // Already closing.
        }
      };
      const onStop = () => {
        drop(1000, 'client closed');
        settle({ kind: 'stopped' });
      };
      stop.signal.addEventListener('abort', onStop, { once: true });
      const finish = (outcome: Outcome) => {
        ignoring = true;
        stop.signal.removeEventListener('abort', onStop);
        settle(outcome);
      };

      const probed = readRunRecord(fetchImpl, runUrl(options, ''), stop.signal);
      void probed.then((record) => {
        if (record === 'not_found') {
          notFound = true;
          return drop(1000, 'run not found');
        }
        target = record === null ? null : record.lastSeq;
        if (record !== null && !ignoring) pendingChanged(pending.seed(record));
        phase();
      });

      ws.addEventListener('open', () => {
        opened = true;
        phase();
      });
      const handle = (frame: TailFrame) => {
        if (isStatusFrame(frame)) {
          // Sent only once we hold every event; if not, the server skipped some: fetch them again.
          if (frame.record.lastSeq > last) return drop(CLIENT_CLOSE.gap, `gap: status at ${frame.record.lastSeq}, have ${last}`);
          status = frame.record;
          options.onStatus?.(status);
          // Done: the server closes with 1000 next, but nothing more can come, so don't wait on the TCP teardown.
          finish({ kind: 'done', record: status });
          return drop(1000, 'run finished');
        }
        if (!isEventFrame(frame)) return;
        if (frame.seq <= last) return;
        if (frame.seq > last + 1) return drop(CLIENT_CLOSE.gap, `gap: got ${frame.seq}, expected ${last + 1}`);
        last = frame.seq;
        progressed = true;
        onChunk(frame.chunk, frame.seq);
        pendingChanged(pending.apply(frame.chunk));
        phase();
      };
      ws.addEventListener('message', ({ data }) => {
        if (ignoring) return;
        let frame: TailFrame;
        try {
          if (typeof data !== 'string') throw new Error('expected a text frame');
          frame = parseTailFrame(JSON.parse(data));
        } catch (error) {
          fatal = new Error(`Run ${runId}: unreadable tail frame: ${(error as Error).message}`, { cause: error });
          return drop(CLIENT_CLOSE.badFrame, 'unreadable frame');
        }
        try {
          handle(frame);
        } catch (error) {
          // onChunk or onStatus threw: stop, and hand the caller its own error.
          fatal = error;
          drop(1000, 'handler failed');
        }
      });
      const onGone = () => {
        if (fatal !== null) return finish({ kind: 'fatal', error: fatal });
        if (status !== null) return finish({ kind: 'done', record: status });
        if (notFound) return finish({ kind: 'not_found' });
        if (opened) return finish({ kind: 'retry', progressed });
        // A WebSocket cannot see the HTTP status of a failed upgrade: the record read tells a 404.
        drop(1000, 'connect failed');
        void probed.then((record) => finish(record === 'not_found' ? { kind: 'not_found' } : { kind: 'retry', progressed }));
      };
      ws.addEventListener('close', onGone);
      // Node 22's WebSocket (undici) fires only `error`, never `close`, when the upgrade is refused.
      ws.addEventListener('error', () => {
        if (!opened) onGone();
      });
    });
  }

  async function run(): Promise<RunView> {
    const backoff = new Backoff(options.backoff);
    try {
      for (let attempt = 0; ; attempt++) {
        if (stop.signal.aborted) throw stop.signal.reason;
        setState(attempt === 0 ? 'connecting' : 'reconnecting');
        const outcome = await connectOnce();
        if (outcome.kind === 'done') return outcome.record;
        if (outcome.kind === 'not_found') throw new RunNotFoundError(runId);
        if (outcome.kind === 'fatal') throw outcome.error;
        if (outcome.kind === 'stopped') throw stop.signal.reason;
        if (outcome.progressed) backoff.reset();
        setState('reconnecting');
        await sleep(backoff.next(), stop.signal);
      }
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      setState('closed');
    }
  }

  const done = run();
  // Callers who only use close() should not see an unhandled rejection; awaiting `done` still throws.
  done.catch(() => {});
  return {
    done,
    lastSeq: () => last,
    close: () => stop.abort(abortError('attachRun was closed.')),
    pendingToolCalls: () => pending.list(),
    respond: (toolCallId, output) => answerToolCall(fetchImpl, options, toolCallId, { output }),
    reject: (toolCallId, error) => answerToolCall(fetchImpl, options, toolCallId, { error }),
  };
}

function abortError(message: string): Error {
  const error = new Error(message);
  error.name = 'AbortError';
  return error;
}
