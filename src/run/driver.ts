import type { StreamChunk } from '@tanstack/ai';
import { relayRunError, terminalChunkType, type RelayRunErrorCode, type RunnerRunRequest } from '../protocol/index.ts';
import { LineTooLongError, NdjsonReader } from '../runner/ndjson.ts';
import { GroupCommit, IDLE_WINDOW_MS, LIVE_WINDOW_MS } from './group-commit.ts';
import type { RunnerTransport } from '../runner/transport.ts';

/** A chunk as read from the runner: its JSON text (stored as is) and its parsed form. */
export interface IncomingChunk {
  raw: string;
  chunk: StreamChunk;
}

/**
 * Where `accept` left the run: still `open`, now `terminal` (the batch ended
 * with RUN_FINISHED or RUN_ERROR), or `rejected` (it was already terminal, e.g.
 * cancelled, and nothing was appended).
 */
export type AcceptResult = 'open' | 'terminal' | 'rejected';

/**
 * What a producer needs from the run object: the durable cursor and one write
 * that appends chunks and applies SPEC's lifecycle rules to the last of them.
 */
export interface DriverSink {
  runId: string;
  threadId: string;
  lastSeq(): number;
  isTerminal(): boolean;
  accept(chunks: IncomingChunk[]): AcceptResult;
  /** How many clients are watching live; decides how long chunks may wait to be grouped. */
  watchers(): number;
}

type Outcome = 'terminal' | 'ended' | 'stopped';

/**
 * How a pump ended: the run is `settled` (terminal, or stopped on purpose), or
 * a reattach found the runner unreachable or restarting and the object should
 * `retry` later (its alarm does) rather than fail a run the runner may still hold.
 */
export type DriveResult = 'settled' | 'retry';

/**
 * Drives one run: reads the runner's NDJSON stream, appends its chunks, and
 * applies SPEC's lifecycle rules. It never throws — every way a runner can
 * fail ends as a `RUN_ERROR` chunk plus `failed`, so clients see why.
 *
 * The pump can die with the object at any moment (eviction, deploy); that is
 * safe because the runner spools the run and `start(…, 'reattach')` resumes
 * from the durable `lastSeq`.
 */
export class Driver {
  readonly #transport: RunnerTransport;
  readonly #sink: DriverSink;
  #controller: AbortController | undefined;
  #lastByteAt = 0;
  /** Lines that were not JSON chunks (banners, logs): skipped, counted, never stored. */
  skippedLines = 0;

  constructor(transport: RunnerTransport, sink: DriverSink) {
    this.#transport = transport;
    this.#sink = sink;
  }

  /** Whether a pump is running in this instance of the object. */
  get active(): boolean {
    return this.#controller !== undefined;
  }

  /** Epoch ms of the last byte read from the runner (keep-alive lines included). */
  get lastByteAt(): number {
    return this.#lastByteAt;
  }

  /**
   * Runs the pump to the end of the run. `start` posts the request to the
   * runner; `reattach` resumes after the durable `lastSeq`.
   */
  async drive(mode: 'start' | 'reattach', request: RunnerRunRequest | null): Promise<DriveResult> {
    if (this.#controller) return 'settled';
    const controller = new AbortController();
    this.#controller = controller;
    try {
      return await this.#pump(mode, request, controller.signal);
    } catch (error) {
      if (!controller.signal.aborted) this.fail('runner_error', `The relay failed while reading the runner: ${describe(error)}.`);
      return 'settled';
    } finally {
      if (this.#controller === controller) this.#controller = undefined;
    }
  }

  /** Stops reading (cancel, stall, shutdown). Nothing is appended after this returns. */
  stop(): void {
    this.#controller?.abort();
    this.#controller = undefined;
  }

  /** Appends a synthesized `RUN_ERROR` and fails the run, unless it is already terminal. */
  fail(code: RelayRunErrorCode, message: string): void {
    if (this.#sink.isTerminal()) return;
    const chunk = relayRunError(this.#sink.runId, this.#sink.threadId, code, message);
    this.#sink.accept([{ raw: JSON.stringify(chunk), chunk }]);
  }

  async #pump(initial: 'start' | 'reattach', request: RunnerRunRequest | null, signal: AbortSignal): Promise<DriveResult> {
    let mode = initial;
    while (!signal.aborted && !this.#sink.isTerminal()) {
      const from = this.#sink.lastSeq();
      if (mode === 'start' && !request) {
        this.fail('runner_lost', 'This run has no runner request to start from, and its runner does not know it.');
        return 'settled';
      }
      let response: Response;
      try {
        response = mode === 'start' ? await this.#transport.start(request!, signal) : await this.#transport.reattach(this.#sink.runId, from, signal);
      } catch (error) {
        if (signal.aborted) return 'settled';
        // A container restarting refuses connections for a while; only a new run fails at once.
        if (mode === 'reattach') return 'retry';
        this.fail('runner_unavailable', `The harness runner could not be reached (${describe(error)}). Check RUNNER_URL or the container binding, then start a new run.`);
        return 'settled';
      }
      this.#lastByteAt = Date.now();
      if (signal.aborted) return 'settled';
      if (!response.ok) {
        if (mode === 'reattach' && response.status === 404) {
          // The object died before the runner ever saw the run: start it now.
          if (from === -1 && request) {
            mode = 'start';
            continue;
          }
          this.fail('runner_lost', 'The runner no longer knows this run (it restarted or dropped the run), so the rest of its output is lost.');
          return 'settled';
        }
        if (mode === 'reattach' && response.status >= 500) {
          void response.body?.cancel();
          return 'retry';
        }
        const detail = (await response.text().catch(() => '')).slice(0, 500);
        // 502/503/504 come from whatever fronts a runner that is not there.
        const code = response.status >= 502 && response.status <= 504 ? 'runner_unavailable' : 'runner_error';
        this.fail(code, `The harness runner answered ${response.status}${detail ? `: ${detail}` : ''}.`);
        return 'settled';
      }
      if (!response.body) {
        this.fail('runner_error', 'The harness runner answered with an empty body.');
        return 'settled';
      }
      const outcome = await this.#consume(response.body, signal);
      if (outcome !== 'ended') return 'settled';
      // The stream ended with no terminal chunk. Reattaching tells a dropped
      // connection (more lines follow) from a dead harness (nothing follows).
      if (mode === 'reattach' && this.#sink.lastSeq() === from) {
        this.fail('runner_lost', 'The harness stopped without finishing the run: its stream ended with no RUN_FINISHED or RUN_ERROR.');
        return 'settled';
      }
      mode = 'reattach';
    }
    return 'settled';
  }

  async #consume(body: ReadableStream<Uint8Array>, signal: AbortSignal): Promise<Outcome> {
    const reader = body.getReader();
    const lines = new NdjsonReader();
    const group = new GroupCommit(
      (chunks) => this.#sink.accept(chunks),
      () => (this.#sink.watchers() > 0 ? LIVE_WINDOW_MS : IDLE_WINDOW_MS),
      // A timed flush found the run cancelled: stop reading.
      () => void reader.cancel().catch(() => undefined),
    );
    try {
      for (;;) {
        let next: ReadableStreamReadResult<Uint8Array>;
        try {
          next = await reader.read();
        } catch {
          if (signal.aborted || this.#sink.isTerminal()) return 'stopped';
          group.flush();
          return 'ended';
        }
        if (signal.aborted) return 'stopped';
        this.#lastByteAt = Date.now();
        let items;
        try {
          items = next.done ? lines.end() : lines.push(next.value);
        } catch (error) {
          if (!(error instanceof LineTooLongError)) throw error;
          group.flush();
          this.fail('chunk_too_large', `The harness wrote a chunk over 1 MiB (${error.bytes} bytes or more); the run was stopped rather than store a partial chunk.`);
          await this.#transport.cancel(this.#sink.runId).catch(() => undefined);
          return 'terminal';
        }
        const batch: IncomingChunk[] = [];
        for (const item of items) {
          if (item.kind === 'skipped') this.skippedLines++;
          if (item.kind !== 'chunk') continue;
          batch.push(item);
          // Nothing after a terminal chunk belongs to the run.
          if (terminalChunkType(item.chunk)) break;
        }
        const result = group.add(batch);
        if (result === 'terminal') return 'terminal';
        if (result === 'rejected' || this.#sink.isTerminal()) return 'stopped';
        if (next.done) {
          const last = group.flush();
          return last === 'terminal' ? 'terminal' : last === 'rejected' ? 'stopped' : 'ended';
        }
      }
    } finally {
      // Whatever is still pending is in the runner's spool; a reattach replays it.
      group.discard();
      reader.cancel().catch(() => undefined);
    }
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
