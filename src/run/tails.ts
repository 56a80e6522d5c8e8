import { isTerminalRunStatus } from '@tanstack/ai';
import { CLOSE_CODES, eventFrameJson, statusFrame, type RunView } from '../protocol/index.ts';
import type { RunLog, StoredEvent } from './run-log.ts';

/**
 * What a tail socket remembers across hibernation: the last seq it was sent.
 * Attachments survive eviction, so the cursor must live here, not in memory.
 */
export interface TailAttachment {
  cursor: number;
  /** Whether this connection's credentials may cancel the run (an `abort` frame). */
  canCancel: boolean;
}

/** Validated field by field: an attachment from an older deploy may have another shape. */
export function parseAttachment(value: unknown): TailAttachment | null {
  if (typeof value !== 'object' || value === null) return null;
  const { cursor, canCancel } = value as Record<string, unknown>;
  if (typeof cursor !== 'number' || !Number.isSafeInteger(cursor) || cursor < -1) return null;
  return { cursor, canCancel: canCancel === true };
}

/** Replay sends at most this many events before yielding to live appends and other sockets. */
const REPLAY_PAGE_EVENTS = 1024;

const OPEN = 1;

/**
 * WebSocket tails on the Hibernation API. Frames are pushed from the append
 * path to the sockets `getWebSockets()` returns, each socket's cursor in its
 * attachment; there is no timer or poll per socket, so an attached, idle
 * client lets the object hibernate.
 *
 * Invariant: a socket is sent seq `n` only when its cursor is `n - 1`, and the
 * cursor moves with every send. That is what rules out a gap or a duplicate
 * between the backlog and the live tail.
 */
export class Tails {
  readonly #ctx: DurableObjectState;
  readonly #log: RunLog;
  /** Sockets with a replay in progress in this instance; live appends skip them. */
  readonly #replaying = new Set<WebSocket>();

  constructor(ctx: DurableObjectState, log: RunLog) {
    this.#ctx = ctx;
    this.#log = log;
  }

  /** Takes over a server socket that wants the events after `fromSeq`. */
  accept(ws: WebSocket, fromSeq: number, canCancel: boolean): void {
    this.#ctx.acceptWebSocket(ws);
    const attachment: TailAttachment = { cursor: fromSeq, canCancel };
    ws.serializeAttachment(attachment);
    void this.#catchUp(ws, attachment);
  }

  /** Fans freshly appended (and durable) events out to every caught-up socket. */
  publish(events: readonly StoredEvent[]): void {
    if (events.length === 0) return;
    const first = events[0]!.seq;
    for (const ws of this.#ctx.getWebSockets()) {
      if (this.#replaying.has(ws)) continue;
      const attachment = parseAttachment(ws.deserializeAttachment());
      if (!attachment) {
        safeClose(ws, CLOSE_CODES.unreadableState, 'unreadable tail state; reconnect with your last seq');
        continue;
      }
      if (attachment.cursor < first - 1) {
        // Behind with no replay running here: the object restarted mid-replay.
        void this.#catchUp(ws, attachment);
        continue;
      }
      this.#send(ws, attachment, events);
    }
  }

  /** The run reached a terminal status: caught-up sockets get the record and a normal close. */
  settle(record: RunView): void {
    for (const ws of this.#ctx.getWebSockets()) {
      if (this.#replaying.has(ws)) continue;
      const attachment = parseAttachment(ws.deserializeAttachment());
      if (attachment && attachment.cursor >= record.lastSeq) this.#finish(ws, record);
      else if (attachment) void this.#catchUp(ws, attachment);
    }
  }

  /** Closes every tail, e.g. when the run's storage is deleted. */
  closeAll(code: number, reason: string): void {
    for (const ws of this.#ctx.getWebSockets()) safeClose(ws, code, reason);
  }

  get count(): number {
    return this.#ctx.getWebSockets().length;
  }

  async #catchUp(ws: WebSocket, attachment: TailAttachment): Promise<void> {
    this.#replaying.add(ws);
    try {
      for (;;) {
        if (ws.readyState !== OPEN) return;
        const events = this.#log.page(attachment.cursor, REPLAY_PAGE_EVENTS);
        if (events.length === 0) break;
        this.#send(ws, attachment, events);
        // Yield so live appends, other sockets and incoming requests interleave
        // with a long replay instead of waiting behind it.
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

  #send(ws: WebSocket, attachment: TailAttachment, events: readonly StoredEvent[]): void {
    let sent = false;
    try {
      for (const event of events) {
        if (event.seq !== attachment.cursor + 1) {
          if (event.seq <= attachment.cursor) continue;
          break;
        }
        ws.send(eventFrameJson(event.seq, event.raw));
        attachment.cursor = event.seq;
        sent = true;
      }
    } catch {
      // The socket closed under us; its close handler cleans up.
    } finally {
      if (sent) ws.serializeAttachment(attachment);
    }
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

/** Close without throwing: the socket may already be closing, and 1005/1006 may never be echoed. */
export function safeClose(ws: WebSocket, code: number, reason: string): void {
  try {
    ws.close(code, reason);
  } catch {
    // Already closed.
  }
}
