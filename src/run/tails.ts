import { isTerminalRunStatus } from '@tanstack/ai';
import { CLOSE_CODES, eventFrameJson, isObject, ownRecord, statusFrame, type RunView } from '../protocol/index.ts';
import type { RunLog, StoredEvent } from './run-log.ts';

/**
 * What a tail socket remembers across hibernation: the last seq it was sent.
 * Attachments survive eviction, so the cursor must live here, not in memory.
 */
export interface TailAttachment {
  cursor: number;
  /** Whether this connection's credentials may cancel the run (an `abort` frame). */
  canCancel: boolean;
  /** Whether they may answer its client tool calls (a `tool_result` frame). */
  canRespond: boolean;
}

/** Validated field by field, own properties only: an attachment from an older deploy may have another shape. `null`, never a throw. */
export function parseAttachment(value: unknown): TailAttachment | null {
  if (!isObject(value)) return null;
  let fields;
  try {
    fields = ownRecord(value, 'attachment');
  } catch {
    return null;
  }
  const { cursor, canCancel, canRespond } = fields;
  if (typeof cursor !== 'number' || !Number.isSafeInteger(cursor) || cursor < -1) return null;
  return { cursor, canCancel: canCancel === true, canRespond: canRespond === true };
}

/**
 * Every tail reads the log in pages of this many events, WebSocket and HTTP
 * alike, yielding between pages so live appends, other clients and incoming
 * requests interleave with a long replay instead of waiting behind it.
 */
export const TAIL_PAGE_EVENTS = 1024;

const OPEN = 1;

/** An HTTP tail waiting for the next change: its cursor lives in its own loop. */
type Waiter = () => void;

/**
 * The one fan-out of a run: WebSocket tails on the Hibernation API and HTTP
 * (SSE/NDJSON) tails. It reads the log, never writes it; the lifecycle calls
 * `flush` after every durable append or terminal status.
 *
 * WebSocket frames are pushed to the sockets `getWebSockets()` returns, each
 * socket's cursor in its attachment (read once per flush); there is no timer
 * or poll per socket, so an attached, idle client lets the object hibernate.
 * HTTP tails are pulled by their reader, so a slow one slows its own replay.
 *
 * Invariant, for both: a tail is sent the events after its cursor in seq
 * order, exactly as the log pages them (a seq missing from a migrated legacy
 * log is skipped, never waited for), and the cursor moves with every send.
 * A socket gets a live flush only when nothing stored lies between its cursor
 * and the flush; otherwise it catches up from storage first. That is what
 * rules out a gap or a duplicate between the backlog and the live tail.
 */
export class Tails {
  readonly #ctx: DurableObjectState;
  readonly #log: RunLog;
  /** Sockets with a replay in progress in this instance; live flushes skip them. */
  readonly #replaying = new Set<WebSocket>();
  readonly #waiters = new Set<Waiter>();
  #streams = 0;

  constructor(ctx: DurableObjectState, log: RunLog) {
    this.#ctx = ctx;
    this.#log = log;
  }

  /** How many clients watch live (sockets and HTTP tails): decides how long chunks may wait to be grouped. */
  get watchers(): number {
    return this.#ctx.getWebSockets().length + this.#streams;
  }

  /** Takes over a server socket that wants the events after `fromSeq`. */
  acceptSocket(ws: WebSocket, fromSeq: number, rights: { canCancel: boolean; canRespond: boolean }): void {
    this.#ctx.acceptWebSocket(ws);
    const attachment: TailAttachment = { cursor: fromSeq, canCancel: rights.canCancel, canRespond: rights.canRespond };
    ws.serializeAttachment(attachment);
    void this.#catchUp(ws, attachment);
  }

  /**
   * Fans freshly appended (and durable) events out; `ended` is the record when
   * this flush made the run terminal. One pass over the sockets.
   */
  flush(events: readonly StoredEvent[], ended: RunView | null): void {
    const first = events[0]?.seq;
    for (const ws of this.#ctx.getWebSockets()) {
      if (this.#replaying.has(ws)) continue;
      const attachment = parseAttachment(ws.deserializeAttachment());
      if (!attachment) {
        safeClose(ws, CLOSE_CODES.unreadableState, 'unreadable tail state; reconnect with your last seq');
        continue;
      }
      if (first !== undefined && attachment.cursor < first - 1) {
        // Behind with no replay running here: the object restarted mid-replay.
        void this.#catchUp(ws, attachment);
        continue;
      }
      if (events.length > 0) this.#send(ws, attachment, events);
      if (!ended) continue;
      if (attachment.cursor >= ended.lastSeq) this.#finish(ws, ended);
      else void this.#catchUp(ws, attachment);
    }
    for (const wake of [...this.#waiters]) wake();
  }

  /**
   * The HTTP tail's frames: pages after `fromSeq`, then live ones, then the
   * final record once the run is terminal and the reader has every event.
   */
  async *stream(fromSeq: number, signal: AbortSignal): AsyncGenerator<StoredEvent[] | RunView> {
    let cursor = fromSeq;
    this.#streams++;
    try {
      while (!signal.aborted) {
        const events = this.#log.page(cursor, TAIL_PAGE_EVENTS);
        if (events.length > 0) {
          cursor = events[events.length - 1]!.seq;
          yield events;
          continue;
        }
        const record = this.#log.get();
        if (!record) return;
        if (isTerminalRunStatus(record.status)) {
          yield record;
          return;
        }
        await this.#changed(signal);
      }
    } finally {
      this.#streams--;
    }
  }

  /** Closes every tail, e.g. when the run's storage is deleted. */
  closeAll(code: number, reason: string): void {
    for (const ws of this.#ctx.getWebSockets()) safeClose(ws, code, reason);
    for (const wake of [...this.#waiters]) wake();
  }

  /** The client closed: complete the handshake, quietly for the codes that may never be sent (1005, 1006, 1015). */
  onClose(ws: WebSocket, code: number): void {
    safeClose(ws, code === 1005 || code === 1006 || code === 1015 ? CLOSE_CODES.done : code, '');
  }

  #changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.#waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.#waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  async #catchUp(ws: WebSocket, attachment: TailAttachment): Promise<void> {
    if (this.#replaying.has(ws)) return;
    this.#replaying.add(ws);
    try {
      for (;;) {
        if (ws.readyState !== OPEN) return;
        const events = this.#log.page(attachment.cursor, TAIL_PAGE_EVENTS);
        if (events.length === 0 || !this.#send(ws, attachment, events)) break;
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
    } finally {
      this.#replaying.delete(ws);
    }
    // Caught up, and no await since the last page: nothing can have slipped in.
    const record = this.#log.get();
    if (!record) safeClose(ws, CLOSE_CODES.goingAway, 'run not found');
    else if (isTerminalRunStatus(record.status) && attachment.cursor >= record.lastSeq) this.#finish(ws, record);
  }

  /** Sends the events after the socket's cursor, in order; whether any was sent. */
  #send(ws: WebSocket, attachment: TailAttachment, events: readonly StoredEvent[]): boolean {
    let sent = false;
    try {
      for (const event of events) {
        if (event.seq <= attachment.cursor) continue;
        ws.send(eventFrameJson(event.seq, event.raw));
        attachment.cursor = event.seq;
        sent = true;
      }
    } catch {
      // The socket closed under us; its close handler cleans up.
    } finally {
      if (sent) ws.serializeAttachment(attachment);
    }
    return sent;
  }

  #finish(ws: WebSocket, record: RunView): void {
    try {
      ws.send(JSON.stringify(statusFrame(record)));
    } catch {
      return;
    }
    safeClose(ws, CLOSE_CODES.done, 'run finished');
  }
}

/** Close without throwing: the socket may already be closing. */
export function safeClose(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}
