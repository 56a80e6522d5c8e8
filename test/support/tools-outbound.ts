/** The tools project's TOOL_WEBHOOK_SECRET; the tests recompute signatures with it. */
export const TOOLS_WEBHOOK_SECRET = 'whsec-tools-project-5f0c2b';

/**
 * The tools project's outbound network (miniflare's `outboundService`, run in
 * Node): `runner.test` is the real runner, anything else — the webhook double
 * on loopback — goes out as the Worker sent it.
 */
export function toolsOutbound(runnerUrl: string) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const target = url.hostname === 'runner.test' ? new URL(url.pathname + url.search, runnerUrl) : url;
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    return fetch(target, { method: request.method, headers: request.headers, body, signal: request.signal, redirect: 'manual' });
  };
}
