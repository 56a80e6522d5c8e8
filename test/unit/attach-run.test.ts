import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StreamChunk } from '@tanstack/ai';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { WebSocket as WsWebSocket, WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { attachRun, RunNotFoundError, type AttachState } from '../../src/client/index.ts';
import { Backoff } from '../../src/client/backoff.ts';
import { eventFrame, statusFrame, type RunView } from '../../src/protocol/index.ts';

const RUN_ID = 'run_0123456789abcdef0123456789abcdef';
const FAST = { baseMs: 5, maxMs: 20 };

/** One WebSocket connection as the fake relay sees it. */
interface Connection {
  socket: ServerSocket;
  fromSeq: number;
  index: number;
}

/**
 * A relay double on loopback: `GET /runs/:id` answers `record` (404 for any
 * other run), and each WebSocket connection is handed to `onConnection`,
 * which the test scripts (drops, duplicates, gaps, the status frame).
 */
class FakeRelay {
  readonly server: Server;
  readonly wss: WebSocketServer;
  readonly fromSeqs: number[] = [];
  record: RunView = view('running', -1);
  onConnection: (connection: Connection) => void = () => {};
  closes: number[] = [];

  constructor() {
    this.server = createServer((req, res) => {
      if (req.url?.split('?')[0] !== `/runs/${RUN_ID}`) {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'run_not_found', message: 'no such run' } }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ...this.record, links: {} }));
    });
    this.wss = new WebSocketServer({ noServer: true });
    this.server.on('upgrade', (req, socket, head) => {
      const url = new URL(req.url ?? '/', 'http://x');
      if (url.pathname !== `/runs/${RUN_ID}/ws`) {
        socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => {
        const fromSeq = Number(url.searchParams.get('fromSeq'));
        this.fromSeqs.push(fromSeq);
        ws.on('close', (code) => this.closes.push(code));
        this.onConnection({ socket: ws, fromSeq, index: this.fromSeqs.length - 1 });
      });
    });
  }

  async listen(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

function view(status: RunView['status'], lastSeq: number): RunView {
  const record: RunView = { runId: RUN_ID, threadId: RUN_ID, status, lastSeq, startedAt: 1, updatedAt: 2 };
  if (status !== 'running') record.finishedAt = 2;
  return record;
}

function chunk(seq: number): StreamChunk {
  return { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `<${seq}>`, timestamp: seq } as unknown as StreamChunk;
}

function send(socket: ServerSocket, ...seqs: number[]): void {
  for (const seq of seqs) socket.send(JSON.stringify(eventFrame(seq, chunk(seq))));
}

function finish(socket: ServerSocket, record: RunView): void {
  socket.send(JSON.stringify(statusFrame(record)));
  socket.close(1000, 'run finished');
}

let relay: FakeRelay;
let baseUrl: string;

beforeEach(async () => {
  relay = new FakeRelay();
  baseUrl = await relay.listen();
});

afterEach(async () => {
  await relay.close();
});

describe('attachRun', () => {
  it('delivers each seq once, in order, across a drop, duplicates, a gap and a short status', async () => {
    const final = view('completed', 11);
    relay.record = view('running', 4);
    relay.onConnection = ({ socket, index }) => {
      if (index === 0) {
        send(socket, 0, 1, 2, 3, 4);
        setTimeout(() => socket.terminate(), 20); // no close frame: 1006 on the client
      } else if (index === 1) {
        send(socket, 3, 4, 4, 5, 6, 8, 9); // duplicates, then a gap after 6
      } else if (index === 2) {
        send(socket, 7, 8, 9);
        socket.send(JSON.stringify(statusFrame(final))); // claims 11 while the client has 9
      } else {
        send(socket, 10, 11, 11);
        finish(socket, final);
      }
    };
    const seqs: number[] = [];
    const deltas: string[] = [];
    const statuses: RunView[] = [];
    const states: AttachState[] = [];
    const tail = attachRun({
      baseUrl,
      runId: RUN_ID,
      backoff: FAST,
      onChunk: (c, seq) => {
        seqs.push(seq);
        deltas.push((c as unknown as { delta: string }).delta);
      },
      onStatus: (record) => statuses.push(record),
      onState: (state) => states.push(state),
    });

    await expect(tail.done).resolves.toEqual(final);
    expect(seqs).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(deltas.join('')).toBe(seqs.map((s) => `<${s}>`).join(''));
    expect(relay.fromSeqs).toEqual([-1, 4, 6, 9]);
    expect(statuses).toEqual([final]);
    expect(tail.lastSeq()).toBe(11);
    expect(states[0]).toBe('connecting');
    expect(states).toContain('reconnecting');
    expect(states.at(-1)).toBe('closed');
    expect(relay.closes).toContain(4000); // the client closed on the gap
  });

  it('resumes from fromSeq, reports replaying until the record lastSeq at connect, then live', async () => {
    relay.record = view('running', 7);
    relay.onConnection = ({ socket }) => {
      send(socket, 5, 6, 7);
      setTimeout(() => {
        send(socket, 8);
        finish(socket, view('completed', 8));
      }, 150);
    };
    const stateAt: Record<number, AttachState> = {};
    let current: AttachState | undefined;
    const tail = attachRun({
      baseUrl,
      runId: RUN_ID,
      fromSeq: 4,
      WebSocketImpl: WsWebSocket,
      onChunk: (_c, seq) => {
        stateAt[seq] = current!;
      },
      onState: (state) => (current = state),
    });
    await tail.done;
    expect(relay.fromSeqs).toEqual([4]);
    expect(Object.keys(stateAt).map(Number)).toEqual([5, 6, 7, 8]);
    // Chunk 7 reaches the record's lastSeq: it is delivered while replaying, and the state turns live after it.
    expect([stateAt[5], stateAt[6], stateAt[7]]).toEqual(['replaying', 'replaying', 'replaying']);
    expect(stateAt[8]).toBe('live');
    expect(current).toBe('closed');
  });

  it('rejects done with RunNotFoundError for an unknown run, without retrying', async () => {
    const states: AttachState[] = [];
    const tail = attachRun({
      baseUrl,
      runId: 'run_ffffffffffffffffffffffffffffffff',
      backoff: FAST,
      onChunk: () => {},
      onState: (state) => states.push(state),
    });
    const error = await tail.done.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RunNotFoundError);
    expect((error as RunNotFoundError).code).toBe('run_not_found');
    expect(relay.fromSeqs).toEqual([]);
    expect(states).toEqual(['connecting', 'closed']);
  });

  it('stops on abort: done rejects with the reason, the socket closes, no reconnect', async () => {
    relay.record = view('running', 100);
    relay.onConnection = ({ socket }) => send(socket, 0, 1, 2);
    const controller = new AbortController();
    const seqs: number[] = [];
    const tail = attachRun({
      baseUrl,
      runId: RUN_ID,
      backoff: FAST,
      signal: controller.signal,
      onChunk: (_c, seq) => {
        seqs.push(seq);
        if (seq === 2) controller.abort(new Error('user left'));
      },
    });
    await expect(tail.done).rejects.toThrow('user left');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seqs).toEqual([0, 1, 2]);
    expect(relay.fromSeqs).toEqual([-1]);
    expect(relay.closes).toEqual([1000]);
  });

  it('resolves done on the status frame even if the server never finishes closing', async () => {
    const final = view('aborted', 1);
    relay.record = final;
    relay.onConnection = ({ socket }) => {
      send(socket, 0, 1);
      socket.send(JSON.stringify(statusFrame(final)));
    };
    const tail = attachRun({ baseUrl, runId: RUN_ID, onChunk: () => {} });
    await expect(tail.done).resolves.toEqual(final);
    await vi.waitFor(() => expect(relay.closes).toEqual([1000]));
  });

  it('close() rejects done with an AbortError', async () => {
    relay.onConnection = () => {};
    const tail = attachRun({ baseUrl, runId: RUN_ID, onChunk: () => {} });
    tail.close();
    await expect(tail.done).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('keeps reconnecting while the relay refuses, from the same seq, until it answers', async () => {
    relay.record = view('running', 1);
    relay.onConnection = ({ socket, index }) => {
      if (index < 3) return socket.terminate();
      send(socket, 0, 1);
      finish(socket, view('completed', 1));
    };
    const seqs: number[] = [];
    const tail = attachRun({ baseUrl, runId: RUN_ID, backoff: FAST, onChunk: (_c, seq) => seqs.push(seq) });
    await expect(tail.done).resolves.toMatchObject({ status: 'completed', lastSeq: 1 });
    expect(relay.fromSeqs).toEqual([-1, -1, -1, -1]);
    expect(seqs).toEqual([0, 1]);
  });

  it('rejects done with the error onChunk threw', async () => {
    relay.onConnection = ({ socket }) => send(socket, 0);
    const tail = attachRun({
      baseUrl,
      runId: RUN_ID,
      onChunk: () => {
        throw new Error('render failed');
      },
    });
    await expect(tail.done).rejects.toThrow('render failed');
  });
});

describe('Backoff', () => {
  it('draws full jitter under a doubling ceiling, capped, and resets after progress', () => {
    const top = new Backoff({ baseMs: 250, maxMs: 10_000, random: () => 0.9999 });
    expect([1, 2, 3, 4, 5, 6, 7].map(() => top.next())).toEqual([249, 499, 999, 1999, 3999, 7999, 9999]);
    top.reset();
    expect(top.next()).toBe(249);
    expect(new Backoff({ random: () => 0 }).next()).toBe(0);
  });
});
