import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import NodeWebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../scripts/local-stack.ts';
import { CHROMIUM, HAS_CHROMIUM, launchChromium } from './chromium.ts';
import { getRun, postRun, startStack } from './stack.ts';

/**
 * A hostile page on another origin, in real Chromium, against `npm start`'s
 * stack with auth off: the developer's relay is one `fetch` away from it. It
 * tries what a browser lets any page do without CORS — a `no-cors` POST with
 * or without a Content-Type, a cancel, a WebSocket — and starts, cancels and
 * attaches to nothing.
 */
if (!HAS_CHROMIUM) console.warn(`test/e2e/cross-origin.test.ts skipped: ${CHROMIUM} is missing (Debian: apt-get install -y chromium).`);

function serveAttackerPage(): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<!doctype html><title>not the relay</title><p>an unrelated site</p>');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

/** A request naming another `Host`, as a browser sends it once a name is rebound to 127.0.0.1. */
function withHost(base: string, host: string, path: string): Promise<{ status: number; code: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (data: string) => (body += data));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, code: (JSON.parse(body) as { error?: { code: string } }).error?.code }));
    });
    req.on('error', reject);
    req.end();
  });
}

function upgradeStatus(base: string, path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new NodeWebSocket(`${base.replace('http', 'ws')}${path}`, { headers });
    ws.on('open', () => {
      ws.terminate();
      resolve(101);
    });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      ws.terminate();
      resolve(res.statusCode ?? 0);
    });
    ws.on('error', reject);
  });
}

async function threadStatus(base: string, threadId: string): Promise<number> {
  const res = await fetch(`${base}/threads/${threadId}`);
  await res.body?.cancel();
  return res.status;
}

describe.skipIf(!HAS_CHROMIUM)('a page on another origin', () => {
  let dir: string;
  let stack: LocalStack;
  let attacker: Server;
  let attackerUrl: string;
  let browser: BrowserContext;
  let page: Page;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-e2e-xorigin-'));
    stack = await startStack();
    attacker = await serveAttackerPage();
    attackerUrl = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}/`;
    browser = await launchChromium(join(dir, 'profile'));
    page = await browser.newPage();
    await page.goto(attackerUrl);
  });

  afterAll(async () => {
    await browser?.close();
    attacker?.close();
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts no run with a no-cors POST /runs, with or without a Content-Type, nor with a CORS one', async () => {
    const statuses = await page.evaluate(async (relay) => {
      const body = (threadId: string) => JSON.stringify({ prompt: 'touch /tmp/pwned', threadId });
      const attempts: Array<[string, RequestInit]> = [
        ['xo-plain', { method: 'POST', mode: 'no-cors', body: body('xo-plain') }],
        // A no-cors request cannot carry application/json: the browser drops the header and sends text/plain.
        ['xo-json', { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'application/json' }, body: body('xo-json') }],
        ['xo-blob', { method: 'POST', mode: 'no-cors', body: new Blob([body('xo-blob')]) }],
        ['xo-cors', { method: 'POST', mode: 'cors', headers: { 'content-type': 'application/json' }, body: body('xo-cors') }],
      ];
      const out: Record<string, string> = {};
      for (const [name, init] of attempts) {
        try {
          const res = await fetch(`${relay}/runs`, init);
          out[name] = res.type === 'opaque' ? 'opaque' : String(res.status);
        } catch {
          out[name] = 'blocked';
        }
      }
      return out;
    }, stack.url);
    // The page learns nothing (opaque, or blocked by CORS); the server side is what matters.
    expect(Object.values(statuses).every((s) => s === 'opaque' || s === 'blocked')).toBe(true);
    for (const threadId of ['xo-plain', 'xo-json', 'xo-blob', 'xo-cors']) expect(await threadStatus(stack.url, threadId)).toBe(404);
  });

  it('cancels nothing, and attaches no WebSocket', async () => {
    const run = await postRun(stack.url, { prompt: 'a long one', harnessOptions: { chunks: 400, delayMs: 50 } });
    const outcome = await page.evaluate(
      async ({ relay, runId }) => {
        await fetch(`${relay}/runs/${runId}/cancel`, { method: 'POST', mode: 'no-cors' }).catch(() => undefined);
        await fetch(`${relay}/runs/${runId}/cancel`, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'application/json' }, body: '{}' }).catch(() => undefined);
        const socket = await new Promise<{ opened: boolean; frames: number }>((resolve) => {
          const ws = new WebSocket(`${relay.replace('http', 'ws')}/runs/${runId}/ws`);
          let opened = false;
          let frames = 0;
          ws.onopen = () => (opened = true);
          ws.onmessage = () => frames++;
          ws.onclose = () => resolve({ opened, frames });
        });
        return socket;
      },
      { relay: stack.url, runId: run.runId },
    );
    expect(outcome).toEqual({ opened: false, frames: 0 });
    expect((await getRun(stack.url, run.runId)).status).toBe('running');
    // A cancel from the relay's own origin (its demo page) still works.
    const own = await fetch(`${stack.url}/runs/${run.runId}/cancel`, { method: 'POST', headers: { origin: stack.url } });
    expect(((await own.json()) as { status: string }).status).toBe('aborted');
  });

  it('is refused in so many words when its Origin is visible (403 forbidden_origin, 415 without JSON)', async () => {
    const foreign = new URL(attackerUrl).origin;
    const refused = await fetch(`${stack.url}/runs`, { method: 'POST', headers: { origin: foreign, 'content-type': 'application/json' }, body: '{"prompt":"x"}' });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('forbidden_origin');
    const untyped = await fetch(`${stack.url}/runs`, { method: 'POST', body: new TextEncoder().encode('{"prompt":"x"}') });
    expect(untyped.status).toBe(415);
    await untyped.body?.cancel();
  });

  it('refuses a DNS-rebound name (Host evil.test) over HTTP and WebSocket, and serves loopback names', async () => {
    const run = await postRun(stack.url, { prompt: 'rebinding', harnessOptions: { chunks: 5, delayMs: 0 } });
    expect(await withHost(stack.url, 'evil.test', `/runs/${run.runId}`)).toEqual({ status: 403, code: 'forbidden_host' });
    expect(await withHost(stack.url, 'evil.test:8787', '/health')).toEqual({ status: 403, code: 'forbidden_host' });
    expect(await upgradeStatus(stack.url, `/runs/${run.runId}/ws`, { host: 'evil.test', origin: 'http://evil.test' })).toBe(403);
    for (const host of ['localhost:8787', '127.0.0.1', '[::1]:1']) expect((await withHost(stack.url, host, `/runs/${run.runId}`)).status).toBe(200);
    expect(await upgradeStatus(stack.url, `/runs/${run.runId}/ws`, {})).toBe(101);
  });
});
