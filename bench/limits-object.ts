import { DurableObject } from 'cloudflare:workers';
import { eventFrameJson } from '../src/protocol/index.ts';
import type { BenchEnv } from './bench-env.ts';

/**
 * The raw limits of this machine's workerd, measured with nothing of the
 * product in the way:
 * - SQLite: N single-chunk inserts in one transaction (`insert`);
 * - WebSocket: N frames sent back to back to one client (`burst` message);
 * - replay: one SELECT over the stored rows and one `send` per row (`/replay`).
 * The orchestrator times them from outside: inside a request workerd's clock
 * does not advance.
 */

/** A chunk shaped like the demo harness's text deltas (the bulk of a run). */
export function syntheticChunk(seq: number, deltaBytes: number): string {
  const unit = `[${seq}] bench `;
  const delta = unit.repeat(Math.ceil(deltaBytes / unit.length)).slice(0, deltaBytes);
  return `{"type":"TEXT_MESSAGE_CONTENT","messageId":"run_0123456789abcdef0123456789abcdef-text-1","delta":${JSON.stringify(delta)},"timestamp":${1_764_403_200_000 + seq}}`;
}

const BURST_MESSAGE = /^\{"burst":(\d+),"deltaBytes":(\d+)\}$/;

export class LimitsObject extends DurableObject<BenchEnv> {
  /** Empties the table the insert and replay probes use. */
  async reset(): Promise<void> {
    this.ctx.storage.sql.exec('DROP TABLE IF EXISTS raw');
    this.ctx.storage.sql.exec('CREATE TABLE raw (seq INTEGER PRIMARY KEY, chunk TEXT NOT NULL)');
  }

  /** Appends `n` rows, one chunk each, in one transaction. Returns the rows written as the cursors count them. */
  async insert(n: number, deltaBytes: number): Promise<{ rowsWritten: number; databaseSize: number }> {
    const sql = this.ctx.storage.sql;
    let rowsWritten = 0;
    this.ctx.storage.transactionSync(() => {
      const start = sql.exec<{ next: number }>('SELECT COALESCE(MAX(seq), -1) + 1 AS next FROM raw').one().next;
      for (let i = 0; i < n; i++) {
        rowsWritten += sql.exec('INSERT INTO raw (seq, chunk) VALUES (?, ?)', start + i, syntheticChunk(start + i, deltaBytes)).rowsWritten;
      }
    });
    return { rowsWritten, databaseSize: sql.databaseSize };
  }

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const pair = new WebSocketPair();
    const ws = pair[1];
    this.ctx.acceptWebSocket(ws);
    if (url.pathname === '/replay') {
      const fromSeq = Number(url.searchParams.get('fromSeq') ?? '-1');
      // One statement, one send per row: the floor under any replay.
      for (const row of this.ctx.storage.sql.exec<{ seq: number; chunk: string }>('SELECT seq, chunk FROM raw WHERE seq > ? ORDER BY seq', fromSeq)) {
        ws.send(eventFrameJson(row.seq, row.chunk));
      }
      ws.send('{"type":"status"}');
      ws.close(1000, 'replayed');
    }
    return new Response(null, { status: 101, webSocket: pair[0] });
  }

  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    const match = typeof message === 'string' ? BURST_MESSAGE.exec(message) : null;
    if (!match) return;
    const n = Number(match[1]);
    const deltaBytes = Number(match[2]);
    const frame = eventFrameJson(0, syntheticChunk(0, deltaBytes));
    for (let i = 0; i < n; i++) ws.send(frame);
    ws.send('{"type":"status"}');
  }

  override async webSocketClose(ws: WebSocket, code: number): Promise<void> {
    try {
      ws.close(code === 1005 || code === 1006 || code === 1015 ? 1000 : code, '');
    } catch {
      // Already closed.
    }
  }
}
