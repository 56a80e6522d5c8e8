import type { StreamChunk } from '@tanstack/ai';
import { env, runInDurableObject } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { parseSocketFrame, type RunView, type SocketFrame } from '../../src/protocol/index.ts';
import type { RunObject } from '../../src/run/run-object.ts';

/** A loopback host: with auth off the relay answers no other (DNS rebinding). */
export const BASE = 'http://127.0.0.1:8787';

export function api(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(`${BASE}${path}`, init);
}

export async function createRun(body: unknown = { prompt: 'hello' }, headers: Record<string, string> = {}) {
  const res = await api('/runs', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { res, json: (await res.json()) as Record<string, unknown> & { runId: string } };
}

export function runStub(runId: string) {
  return env.RUNS.get(env.RUNS.idFromName(runId));
}

/** Feeds chunks to a run the way the runner pump does. */
export function feed(runId: string, chunks: StreamChunk[]) {
  return runInDurableObject(runStub(runId), (object: RunObject) => object.ingest(chunks));
}

export function text(i: number): StreamChunk {
  return { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: `t${i};` } as StreamChunk;
}

export function texts(from: number, count: number): StreamChunk[] {
  return Array.from({ length: count }, (_, i) => text(from + i));
}

export const finished = (runId: string) => ({ type: 'RUN_FINISHED', runId, threadId: runId, finishReason: 'stop' }) as unknown as StreamChunk;

/** A WebSocket tail as a client sees it: every frame in order, and how it closed. */
export interface Tail {
  ws: WebSocket;
  frames: SocketFrame[];
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves once `predicate` holds for the frames received so far. */
  until(predicate: (frames: SocketFrame[]) => boolean): Promise<SocketFrame[]>;
  seqs(): number[];
}

export async function openTail(runId: string, query = ''): Promise<Tail> {
  return tailOf(await api(`/runs/${runId}/ws${query}`, { headers: { upgrade: 'websocket' } }));
}

/** A tail from a 101 response, recording every frame and the close. */
export function tailOf(res: Response): Tail {
  if (res.status !== 101 || !res.webSocket) throw new Error(`expected 101, got ${res.status}`);
  const ws = res.webSocket;
  const frames: SocketFrame[] = [];
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  let resolveClosed!: (value: { code: number; reason: string }) => void;
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (resolveClosed = resolve));
  ws.addEventListener('message', (event) => {
    // `pong` answers a `ping` (the auto-response); it is not a frame.
    if (event.data !== 'pong') frames.push(parseSocketFrame(JSON.parse(String(event.data))));
    wake();
  });
  ws.addEventListener('close', (event) => {
    resolveClosed({ code: event.code, reason: event.reason });
    wake();
  });
  ws.accept();
  return {
    ws,
    frames,
    closed,
    until(predicate) {
      return new Promise((resolve) => {
        const check = () => {
          if (predicate(frames)) {
            waiters.delete(check);
            resolve(frames);
          }
        };
        waiters.add(check);
        check();
      });
    },
    seqs: () => frames.flatMap((f) => ('seq' in f ? [f.seq] : [])),
  };
}

/** Polls the record until the run is terminal (a run must finish with no client attached). */
export async function settled(runId: string): Promise<RunView> {
  for (let i = 0; i < 2_000; i++) {
    const current = (await (await api(`/runs/${runId}`)).json()) as RunView;
    if (current.status !== 'running') return current;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`run ${runId} never settled`);
}

export function range(from: number, to: number): number[] {
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}
