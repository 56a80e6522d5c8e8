import type { RunnerRunRequest, ToolResult } from '../protocol/index.ts';
import { toolResultBody, type RunnerTransport } from './transport.ts';

/**
 * The runner over plain HTTP at `RUNNER_URL`: a Node process on loopback in
 * dev and tests, or any runner the owner hosts. `fetch` throws when nothing
 * listens; the driver turns that into `runner_unavailable`. Every request
 * carries the runner token (`RUNNER_TOKEN`, set to the same value on both
 * sides): the runner answers nothing else.
 */
export function httpTransport(baseUrl: string, token: string, fetcher: typeof fetch = fetch): RunnerTransport {
  const url = (path: string) => new URL(path, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`).toString();
  const authorization = `Bearer ${token}`;
  return {
    start(request: RunnerRunRequest, signal?: AbortSignal) {
      return fetcher(url('run'), {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify(request),
        signal: signal ?? null,
      });
    },
    reattach(runId: string, fromSeq: number, signal?: AbortSignal) {
      return fetcher(url(`runs/${encodeURIComponent(runId)}/stream?fromSeq=${fromSeq}`), {
        headers: { authorization, accept: 'application/x-ndjson' },
        signal: signal ?? null,
      });
    },
    cancel(runId: string) {
      return fetcher(url(`runs/${encodeURIComponent(runId)}/cancel`), { method: 'POST', headers: { authorization } });
    },
    toolResult(runId: string, result: ToolResult) {
      return fetcher(url(`runs/${encodeURIComponent(runId)}/tool-results`), {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: toolResultBody(result),
      });
    },
  };
}
