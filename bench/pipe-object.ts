import { DurableObject } from 'cloudflare:workers';
import { eventFrameJson, terminalChunkType, type RunnerRunRequest } from '../src/protocol/index.ts';
import { httpTransport } from '../src/runner/http-transport.ts';
import { NdjsonReader } from '../src/runner/ndjson.ts';
import type { BenchEnv } from './bench-env.ts';
import type { PeerStats } from './peer-stats.ts';

/**
 * The raw pipe: the same runner stream read and parsed the same way, each
 * chunk sent to every attached socket as soon as it is parsed, and nothing
 * stored. Its ingest rate and its latency are what a Durable Object on this
 * machine can do before storage costs anything: the limit for those figures.
 * A socket gets the frames from the moment it attaches (no replay).
 */
export class PipeObject extends DurableObject<BenchEnv> {
  #runId = '';
  #lastSeq = -1;
  #status = 'unknown';
  #firstTimestamp: number | null = null;
  #finishedAt: number | null = null;
  #payloadBytes = 0;

  async start(request: RunnerRunRequest): Promise<void> {
    this.#runId = request.runId;
    this.#status = 'running';
    this.ctx.waitUntil(this.#pump(request));
  }

  async benchStats(runId: string): Promise<PeerStats> {
    const known = runId === this.#runId;
    return {
      runId,
      status: known ? this.#status : 'unknown',
      terminal: known && this.#status !== 'running',
      lastSeq: this.#lastSeq,
      firstTimestamp: this.#firstTimestamp,
      finishedAt: this.#finishedAt,
      rowsWritten: 0,
      rowsRead: 0,
      alarmsSet: 0,
      statements: 0,
      databaseSize: this.ctx.storage.sql.databaseSize,
      payloadBytes: this.#payloadBytes,
      eventRows: null,
    };
  }

  override async fetch(request: Request): Promise<Response> {
    const runId = new URL(request.url).searchParams.get('runId');
    if (runId !== this.#runId) return new Response('no such run', { status: 404 });
    const pair = new WebSocketPair();
    this.ctx.acceptWebSocket(pair[1]);
    if (this.#status !== 'running') this.#settle([pair[1]]);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 || code === 1015 ? 1000 : code, '');
    } catch {
      // Already closed.
    }
  }

  async #pump(request: RunnerRunRequest): Promise<void> {
    const response = await httpTransport(this.env.RUNNER_URL ?? '', this.env.RUNNER_TOKEN ?? '').start(request);
    if (!response.ok || !response.body) {
      this.#end(`runner answered ${response.status}`);
      return;
    }
    const reader = response.body.getReader();
    const lines = new NdjsonReader();
    for (;;) {
      const next = await reader.read();
      const frames: string[] = [];
      let terminal = false;
      for (const item of next.done ? lines.end() : lines.push(next.value)) {
        if (item.kind !== 'chunk') continue;
        this.#lastSeq++;
        this.#payloadBytes += item.raw.length;
        if (this.#lastSeq === 0) {
          const stamp = (item.chunk as { timestamp?: unknown }).timestamp;
          this.#firstTimestamp = typeof stamp === 'number' ? stamp : null;
        }
        frames.push(eventFrameJson(this.#lastSeq, item.raw));
        if (terminalChunkType(item.chunk)) {
          terminal = true;
          break;
        }
      }
      if (frames.length > 0) {
        for (const ws of this.ctx.getWebSockets()) {
          try {
            for (const frame of frames) ws.send(frame);
          } catch {
            // Closed meanwhile.
          }
        }
      }
      if (terminal || next.done) {
        await reader.cancel().catch(() => undefined);
        this.#end(terminal ? 'completed' : 'failed');
        return;
      }
    }
  }

  #end(status: string): void {
    this.#status = status;
    this.#finishedAt = Date.now();
    this.#settle(this.ctx.getWebSockets());
  }

  #settle(sockets: WebSocket[]): void {
    const frame = JSON.stringify({ type: 'status', record: { runId: this.#runId, status: this.#status, lastSeq: this.#lastSeq } });
    for (const ws of sockets) {
      try {
        ws.send(frame);
        ws.close(1000, 'run finished');
      } catch {
        // Closed meanwhile.
      }
    }
  }
}
