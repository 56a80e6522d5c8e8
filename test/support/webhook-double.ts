/**
 * An app's webhook tool endpoints, for the tools project (a Node server the
 * run object calls over loopback http, as auth-off allows). It answers SPEC's
 * contract — `POST` with `{runId, threadId, toolCallId, name, input}`, answer
 * `{output}` or `{error}` — and records every request exactly as it arrived
 * (headers and raw body), so a test can check the signature itself.
 *
 * Behaviours, by path `/hooks/<behaviour>`:
 * - `echo`: `{output: {echo: input}}`;
 * - `add`: `{output: {sum: input.a + input.b}}`;
 * - `flaky`: 500 for the first two requests of an Idempotency-Key, then 200;
 * - `slow`: never answers (the caller's timeout ends it);
 * - `hold-once`: the first request of a key is held open until its caller
 *   goes away; later ones answer `{output: {attempt}}`;
 * - `fail`: 200 `{error}`: the tool itself failed.
 * `GET /_calls` lists the requests received so far.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WebhookRequest {
  path: string;
  signature: string | null;
  idempotencyKey: string | null;
  contentType: string | null;
  body: string;
}

export interface WebhookDouble {
  url: string;
  calls: WebhookRequest[];
  close(): Promise<void>;
}

function read(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => resolve(Buffer.concat(parts).toString('utf8')));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

export async function startWebhookDouble(): Promise<WebhookDouble> {
  const calls: WebhookRequest[] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://hooks').pathname;
      if (req.method === 'GET' && path === '/_calls') return json(res, 200, calls);
      if (req.method !== 'POST' || !path.startsWith('/hooks/')) return json(res, 404, { error: 'no such hook' });
      const body = await read(req);
      const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : null);
      const call: WebhookRequest = { path, signature: header('x-relay-signature'), idempotencyKey: header('idempotency-key'), contentType: header('content-type'), body };
      calls.push(call);
      const sameKey = calls.filter((other) => other.path === path && other.idempotencyKey === call.idempotencyKey).length;
      const { input } = JSON.parse(body) as { input: { a?: number; b?: number } };
      switch (path.slice('/hooks/'.length)) {
        case 'echo':
          return json(res, 200, { output: { echo: input } });
        case 'add':
          return json(res, 200, { output: { sum: (input.a ?? 0) + (input.b ?? 0) } });
        case 'flaky':
          return sameKey <= 2 ? json(res, 500, { error: 'try again' }) : json(res, 200, { output: { attempt: sameKey } });
        case 'slow':
          return; // held until the caller gives up
        case 'hold-once':
          if (sameKey === 1) return; // held until the caller goes away
          return json(res, 200, { output: { attempt: sameKey } });
        case 'fail':
          return json(res, 200, { error: 'the tool failed on purpose' });
        default:
          return json(res, 404, { error: 'no such hook' });
      }
    })().catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
