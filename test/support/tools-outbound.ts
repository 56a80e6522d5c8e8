/** The tools project's TOOL_WEBHOOK_SECRET; the tests recompute signatures with it. */
export const TOOLS_WEBHOOK_SECRET = 'whsec-tools-project-5f0c2b';

/**
 * The tools project's outbound network (miniflare's `outboundService`, run in
 * Node): `runner.test` is the real runner, anything else — the webhook double
 * on loopback — goes out as the Worker sent it.
 */
export function toolsOutbound(runnerUrl: string) {
  /**
   * Runs whose tool results the runner does not get for now: the request is
   * held open (never answered) until the test releases the run, as if the
   * object died between storing an answer and delivering it.
   * `http://tools-control.test/hold?runId=` and `/release?runId=`.
   */
  const held = new Map<string, (() => void)[]>();
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.hostname === 'tools-control.test') {
      const runId = url.searchParams.get('runId') ?? '';
      if (url.pathname === '/hold') held.set(runId, held.get(runId) ?? []);
      if (url.pathname === '/release') {
        for (const wake of held.get(runId) ?? []) wake();
        held.delete(runId);
      }
      return Response.json({ held: [...held.keys()] });
    }
    const toolResult = /^\/runs\/([^/]+)\/tool-results$/.exec(url.pathname);
    const waiting = toolResult ? held.get(toolResult[1]!) : undefined;
    if (url.hostname === 'runner.test' && waiting) {
      // Never answered: the caller is gone by the time the run is released.
      await new Promise<void>((resolve) => waiting.push(resolve));
      return new Response('released', { status: 503 });
    }
    const target = url.hostname === 'runner.test' ? new URL(url.pathname + url.search, runnerUrl) : url;
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
    return fetch(target, { method: request.method, headers: request.headers, body, signal: request.signal, redirect: 'manual' });
  };
}
