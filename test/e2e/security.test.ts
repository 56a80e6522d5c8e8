import { webSocket } from '@tanstack/ai-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { attachSubprotocols, parseTailFrame, type TailFrame } from '../../src/protocol/index.ts';
import type { LocalStack } from '../../scripts/local-stack.ts';
import { startStack } from './stack.ts';
import { attachRun, type WebSocketConstructor } from '../../src/client/index.ts';

/**
 * Auth on, over real HTTP: the handshake details a workerd unit test cannot
 * see (a strict client requires the echoed subprotocol on the 101, and the
 * browser-style Origin check happens on the wire).
 */
const API_TOKEN = 'e2e-api-token-3b8f0c6e';
const APP = 'https://app.example';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startStack({ vars: { API_TOKEN, ALLOWED_ORIGINS: APP } });
});

afterAll(async () => {
  await stack?.close();
});

async function postRun(body: unknown): Promise<{ runId: string; attachToken: string }> {
  const res = await fetch(`${stack.url}/runs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_TOKEN}` },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(202);
  return (await res.json()) as { runId: string; attachToken: string };
}

/**
 * Opens a `ws` socket; resolves with the agreed protocol and the frames up to
 * the status frame, or with the refused handshake's status. It stops at the
 * status frame: wrangler dev's proxy holds the connection for seconds after
 * the close (the close code is asserted in the workerd tests).
 */
function connect(path: string, options: { protocols?: string[]; origin?: string } = {}) {
  return new Promise<{ protocol: string; frames: TailFrame[] } | { refused: number }>((resolve, reject) => {
    const ws = new WebSocket(`${stack.url.replace('http', 'ws')}${path}`, options.protocols ?? [], options.origin ? { origin: options.origin } : {});
    const frames: TailFrame[] = [];
    ws.on('message', (data) => {
      const frame = parseTailFrame(JSON.parse(String(data)));
      frames.push(frame);
      if ('type' in frame) {
        resolve({ protocol: ws.protocol, frames });
        ws.terminate();
      }
    });
    ws.on('close', () => resolve({ protocol: ws.protocol, frames }));
    ws.on('unexpected-response', (_req, res) => {
      resolve({ refused: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.on('error', (error) => {
      if (ws.readyState !== WebSocket.CLOSED) reject(error);
    });
  });
}

describe('auth on, over the wire', () => {
  it('lets the client SDK follow a run with its attach token (offered as a subprotocol, not in the URL)', async () => {
    const { runId, attachToken } = await postRun({ prompt: 'sdk with a token', harnessOptions: { chunks: 30, delayMs: 2 } });
    const seqs: number[] = [];
    const opened: Array<{ url: string; protocols: string[] | undefined }> = [];
    class RecordingWebSocket extends WebSocket {
      constructor(url: string, protocols?: string[]) {
        super(url, protocols);
        opened.push({ url, protocols });
      }
    }
    const run = attachRun({
      baseUrl: stack.url,
      runId,
      token: attachToken,
      onChunk: (_chunk, seq) => void seqs.push(seq),
      WebSocketImpl: RecordingWebSocket as unknown as WebSocketConstructor,
    });
    const record = await run.done;
    expect(record.status).toBe('completed');
    expect(seqs).toEqual(Array.from({ length: record.lastSeq + 1 }, (_, i) => i));
    expect(opened.length).toBeGreaterThan(0);
    for (const socket of opened) {
      expect(socket.url).not.toContain(attachToken);
      expect(socket.protocols).toEqual(attachSubprotocols(attachToken));
    }
  });

  it('reports auth on at /health and refuses /runs without the token', async () => {
    expect(await (await fetch(`${stack.url}/health`)).json()).toEqual({ ok: true, auth: 'on' });
    const res = await fetch(`${stack.url}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"x"}' });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer realm="harness-relay"');
  });

  it('tails with the attach token in Sec-WebSocket-Protocol: ws requires, and gets, harness-relay echoed', async () => {
    const run = await postRun({ prompt: 'subprotocol', harnessOptions: { chunks: 5, delayMs: 0 } });
    const result = await connect(`/runs/${run.runId}/ws`, { protocols: attachSubprotocols(run.attachToken), origin: APP });
    expect(result).toMatchObject({ protocol: 'harness-relay' });
    const frames = (result as { frames: TailFrame[] }).frames;
    expect(frames.at(-1)).toMatchObject({ type: 'status', record: { status: 'completed' } });
  });

  it('lets @tanstack/ai-client join a run with the token as its protocols', async () => {
    const run = await postRun({ prompt: 'ai-client', harnessOptions: { chunks: 5, delayMs: 0 } });
    const connection = webSocket(`${stack.url.replace('http', 'ws')}/runs/${run.runId}/ws`, {
      WebSocketImpl: WebSocket as unknown as typeof globalThis.WebSocket,
      protocols: attachSubprotocols(run.attachToken),
    });
    const types: string[] = [];
    for await (const chunk of connection.joinRun!(run.runId)) {
      types.push(chunk.type);
      if (chunk.type === 'RUN_FINISHED') break;
    }
    expect(types[0]).toBe('RUN_STARTED');
    expect(types.at(-1)).toBe('RUN_FINISHED');
  });

  it('refuses a socket with no credential (401), a forged token (401) and a foreign Origin (403)', async () => {
    const run = await postRun({ prompt: 'refused', harnessOptions: { chunks: 50, delayMs: 20 } });
    expect(await connect(`/runs/${run.runId}/ws`)).toEqual({ refused: 401 });
    expect(await connect(`/runs/${run.runId}/ws`, { protocols: attachSubprotocols(`${run.attachToken}x`) })).toEqual({ refused: 401 });
    expect(await connect(`/runs/${run.runId}/ws`, { protocols: attachSubprotocols(run.attachToken), origin: 'https://evil.example' })).toEqual({ refused: 403 });
  });

  it('streams SSE to an EventSource-style reader with ?token=', async () => {
    const run = await postRun({ prompt: 'sse', harnessOptions: { chunks: 5, delayMs: 0 } });
    const res = await fetch(`${stack.url}/runs/${run.runId}/events?token=${run.attachToken}`, { headers: { accept: 'text/event-stream', origin: APP } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP);
    expect(await res.text()).toContain('event: status');
  });
});
