/**
 * Sits between the run object and the real runner (miniflare's
 * `outboundService`) and plays the runner faults a real runner will not
 * produce on demand. A run picks its fault with `model: 'fault:<name>'`;
 * any other request passes through untouched.
 */
const encoder = new TextEncoder();

/** What the relay asked the runner to run, by run id: `GET /control/requests/:runId`. */
const requests = new Map<string, unknown>();
/** Runs whose first start was swallowed (`fault:hang-first-start`). */
const hung = new Set<string>();

export function faultProxy(runnerUrl: string) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const target = new URL(url.pathname + url.search, runnerUrl);
    // The relay's runner token goes through as sent: the real runner checks it.
    const authorization = request.headers.get('authorization') ?? '';
    const postJson = { 'content-type': 'application/json', authorization };
    if (url.pathname.startsWith('/control/requests/')) {
      return Response.json(requests.get(url.pathname.slice('/control/requests/'.length)) ?? null);
    }
    if (request.method === 'POST' && url.pathname === '/run') {
      const text = await request.text();
      const parsed = JSON.parse(text) as { runId: string };
      requests.set(parsed.runId, parsed);
      const body = JSON.parse(text) as { model?: string };
      switch (body.model) {
        case 'fault:unavailable':
          // What a gateway in front of a runner that is down answers.
          return new Response('no healthy upstream', { status: 503 });
        case 'fault:500':
          return new Response('runner exploded', { status: 500 });
        case 'fault:oversized': {
          const huge = JSON.stringify({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'x'.repeat(1_100_000) });
          return new Response(`{"type":"RUN_STARTED","runId":"r","threadId":"t"}\n${huge}\n`, { headers: { 'content-type': 'application/x-ndjson' } });
        }
        case 'fault:hang-first-start': {
          // The first start never reaches the runner and never answers: the
          // object dies waiting (a test resets it); the next start goes through.
          if (!hung.has(parsed.runId)) {
            hung.add(parsed.runId);
            return new Response(new ReadableStream<Uint8Array>(), { headers: { 'content-type': 'application/x-ndjson' } });
          }
          const { model: _model, ...rest } = body as Record<string, unknown>;
          return fetch(target, { method: 'POST', headers: postJson, body: JSON.stringify(rest) });
        }
        case 'fault:banner': {
          const { model: _model, ...rest } = body as Record<string, unknown>;
          const upstream = await fetch(target, { method: 'POST', headers: postJson, body: JSON.stringify(rest) });
          const banner = encoder.encode('runner v0 starting up...\n\n');
          const stream = new ReadableStream<Uint8Array>({
            async start(controller) {
              controller.enqueue(banner);
              const reader = upstream.body!.getReader();
              for (;;) {
                const { done, value } = await reader.read();
                if (done) break;
                controller.enqueue(value);
              }
              controller.close();
            },
          });
          return new Response(stream, { status: upstream.status, headers: { 'content-type': 'application/x-ndjson' } });
        }
        default:
          return fetch(target, { method: 'POST', headers: postJson, body: text });
      }
    }
    return fetch(target, { method: request.method, headers: request.headers, body: request.method === 'GET' ? null : await request.arrayBuffer() });
  };
}
