import { DurableObject } from 'cloudflare:workers';
import type { StreamChunk } from '@tanstack/ai';
import { eventFrameJson, runErrorOf, terminalChunkType, type RunnerRunRequest } from '../src/protocol/index.ts';
import { httpTransport } from '../src/runner/http-transport.ts';
import { NdjsonReader } from '../src/runner/ndjson.ts';
import type { BenchEnv } from './bench-env.ts';
import type { PeerStats } from './peer-stats.ts';

/**
 * The reference: the run log as the TanStack Cloudflare example stores it
 * (`DurableObjectRunEventLog`, the layout SPEC calls legacy), fed by the same
 * runner stream as the product. Per chunk it reads `rec:<runId>`, then writes
 * `evt:<runId>:<8 digits>` (the chunk, structured-cloned) and the bumped
 * record in one key-value transaction: 2 rows written per chunk. A new client
 * replays with one `list({prefix, start})`, as the reference's `read()` does.
 *
 * Fan-out is kinder than the reference's (whose readers each poll storage
 * after every append): each appended chunk is pushed to caught-up sockets
 * right away, the same frames as the product's. So the latency it shows is a
 * lower bound for the reference.
 */

type LegacyStatus = 'running' | 'done' | 'error' | 'aborted';

interface LegacyRecord {
  runId: string;
  threadId: string;
  status: LegacyStatus;
  lastSeq: number;
  error?: { message: string; code?: string };
  createdAt: number;
  updatedAt: number;
}

const recKey = (runId: string) => `rec:${runId}`;
const evtKey = (runId: string, seq: number) => `evt:${runId}:${String(seq).padStart(8, '0')}`;
const evtPrefix = (runId: string) => `evt:${runId}:`;

interface Cursor {
  cursor: number;
}

function readCursor(value: unknown): Cursor | null {
  if (typeof value !== 'object' || value === null) return null;
  const { cursor } = value as Record<string, unknown>;
  return typeof cursor === 'number' && Number.isSafeInteger(cursor) && cursor >= -1 ? { cursor } : null;
}

export class BaselineRunObject extends DurableObject<BenchEnv> {
  #runId = '';
  /** The record as last read or written by this instance; decides when a replay is caught up. */
  #mirror: LegacyRecord | null = null;
  #keysWritten = 0;
  #keysRead = 0;
  #transactions = 0;
  readonly #replaying = new Set<WebSocket>();

  /** Opens the run (one key written) and starts pumping the runner's stream. */
  async start(request: RunnerRunRequest): Promise<void> {
    this.#runId = request.runId;
    const now = Date.now();
    const record: LegacyRecord = { runId: request.runId, threadId: request.threadId, status: 'running', lastSeq: -1, createdAt: now, updatedAt: now };
    await this.ctx.storage.put(recKey(request.runId), record);
    this.#count(1, 1);
    this.#mirror = record;
    this.ctx.waitUntil(this.#pump(request));
  }

  async benchStats(runId: string): Promise<PeerStats> {
    const record = (await this.ctx.storage.get<LegacyRecord>(recKey(runId))) ?? null;
    const first = record && record.lastSeq >= 0 ? await this.ctx.storage.get<StreamChunk>(evtKey(runId, 0)) : undefined;
    const stamp = (first as { timestamp?: unknown } | undefined)?.timestamp;
    const terminal = record !== null && record.status !== 'running';
    return {
      runId,
      status: record?.status ?? 'unknown',
      terminal,
      lastSeq: record?.lastSeq ?? -1,
      firstTimestamp: typeof stamp === 'number' ? stamp : null,
      finishedAt: terminal ? record.updatedAt : null,
      rowsWritten: this.#keysWritten,
      rowsRead: this.#keysRead,
      alarmsSet: 0,
      statements: this.#transactions,
      databaseSize: this.ctx.storage.sql.databaseSize,
      payloadBytes: null,
      eventRows: null,
    };
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const runId = url.searchParams.get('runId') ?? '';
    const fromSeq = Number(url.searchParams.get('fromSeq') ?? '-1');
    if (runId !== this.#runId && !(await this.ctx.storage.get(recKey(runId)))) return new Response('no such run', { status: 404 });
    this.#runId = runId;
    const pair = new WebSocketPair();
    const ws = pair[1];
    this.ctx.acceptWebSocket(ws);
    const cursor: Cursor = { cursor: fromSeq };
    ws.serializeAttachment(cursor);
    void this.#catchUp(ws, cursor);
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 || code === 1015 ? 1000 : code, '');
    } catch {
      // Already closed.
    }
  }

  #count(written: number, transactions: number): void {
    this.#keysWritten += written;
    this.#transactions += transactions;
  }

  async #require(runId: string): Promise<LegacyRecord> {
    const record = await this.ctx.storage.get<LegacyRecord>(recKey(runId));
    this.#keysRead++;
    if (!record) throw new Error(`baseline: unknown run ${runId}`);
    if (!this.#mirror || record.lastSeq >= this.#mirror.lastSeq) this.#mirror = record;
    return record;
  }

  /** The reference's `append`: read the record, then the event and the bumped record in one transaction. */
  async #append(runId: string, chunk: StreamChunk): Promise<number> {
    const record = await this.#require(runId);
    if (record.status !== 'running') throw new Error(`baseline: run ${runId} is ${record.status}`);
    const seq = record.lastSeq + 1;
    const next: LegacyRecord = { ...record, lastSeq: seq, updatedAt: Date.now() };
    await this.ctx.storage.transaction(async (txn) => {
      await txn.put(evtKey(runId, seq), chunk);
      await txn.put(recKey(runId), next);
    });
    this.#count(2, 1);
    this.#mirror = next;
    return seq;
  }

  async #finish(runId: string, status: LegacyStatus, error?: { message: string; code?: string }): Promise<void> {
    const record = await this.#require(runId);
    if (record.status !== 'running') return;
    const next: LegacyRecord = { ...record, status, updatedAt: Date.now(), ...(error ? { error } : {}) };
    await this.ctx.storage.put(recKey(runId), next);
    this.#count(1, 1);
    this.#mirror = next;
    for (const ws of this.ctx.getWebSockets()) {
      if (this.#replaying.has(ws)) continue;
      const cursor = readCursor(ws.deserializeAttachment());
      if (cursor && cursor.cursor >= next.lastSeq) this.#settle(ws, next);
      else if (cursor) void this.#catchUp(ws, cursor);
    }
  }

  async #pump(request: RunnerRunRequest): Promise<void> {
    const runId = request.runId;
    let response: Response;
    try {
      response = await httpTransport(this.env.RUNNER_URL ?? '', this.env.RUNNER_TOKEN ?? '').start(request);
    } catch (error) {
      return this.#finish(runId, 'error', { message: String(error), code: 'runner_unavailable' });
    }
    if (!response.ok || !response.body) return this.#finish(runId, 'error', { message: `runner answered ${response.status}`, code: 'runner_error' });
    const reader = response.body.getReader();
    const lines = new NdjsonReader();
    for (;;) {
      const next = await reader.read();
      const items = next.done ? lines.end() : lines.push(next.value);
      for (const item of items) {
        if (item.kind !== 'chunk') continue;
        const seq = await this.#append(runId, item.chunk);
        this.#publish(seq, item.raw);
        const terminal = terminalChunkType(item.chunk);
        if (terminal === 'RUN_FINISHED') await this.#finish(runId, 'done');
        if (terminal === 'RUN_ERROR') await this.#finish(runId, 'error', runErrorOf(item.chunk));
        if (terminal) {
          await reader.cancel().catch(() => undefined);
          return;
        }
      }
      if (next.done) return this.#finish(runId, 'error', { message: 'the runner stream ended with no terminal chunk', code: 'runner_lost' });
    }
  }

  #publish(seq: number, raw: string): void {
    const frame = eventFrameJson(seq, raw);
    for (const ws of this.ctx.getWebSockets()) {
      if (this.#replaying.has(ws)) continue;
      const cursor = readCursor(ws.deserializeAttachment());
      if (!cursor) continue;
      if (cursor.cursor < seq - 1) {
        void this.#catchUp(ws, cursor);
        continue;
      }
      if (cursor.cursor !== seq - 1) continue;
      try {
        ws.send(frame);
      } catch {
        continue;
      }
      cursor.cursor = seq;
      ws.serializeAttachment(cursor);
    }
  }

  /** The reference's `read()`: read the record, list every event after the cursor, repeat until caught up. */
  async #catchUp(ws: WebSocket, cursor: Cursor): Promise<void> {
    if (this.#replaying.has(ws)) return;
    this.#replaying.add(ws);
    const runId = this.#runId;
    try {
      for (;;) {
        if (ws.readyState !== WebSocket.OPEN) return;
        await this.#require(runId);
        if (cursor.cursor >= this.#mirror!.lastSeq) break;
        const events = await this.ctx.storage.list<StreamChunk>({ prefix: evtPrefix(runId), start: evtKey(runId, cursor.cursor + 1) });
        this.#keysRead += events.size;
        for (const chunk of events.values()) {
          ws.send(eventFrameJson(cursor.cursor + 1, JSON.stringify(chunk)));
          cursor.cursor++;
        }
        ws.serializeAttachment(cursor);
      }
    } catch {
      return;
    } finally {
      this.#replaying.delete(ws);
    }
    // No await since the loop's last check: an append or a finish cannot have slipped in.
    const record = this.#mirror!;
    if (record.status !== 'running' && cursor.cursor >= record.lastSeq) this.#settle(ws, record);
  }

  #settle(ws: WebSocket, record: LegacyRecord): void {
    try {
      ws.send(JSON.stringify({ type: 'status', record }));
      ws.close(1000, 'run finished');
    } catch {
      // Closed meanwhile.
    }
  }
}
