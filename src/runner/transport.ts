import type { RunnerRunRequest, ToolResult } from '../protocol/index.ts';

/**
 * How the run object reaches a harness runner. Two implementations: plain
 * `fetch` to `RUNNER_URL` (dev, tests) and the container binding through
 * `@cloudflare/sandbox` (deploys). Both speak SPEC's runner protocol; the
 * driver never knows which one it has.
 *
 * Every method answers the runner's raw `Response` (or throws when the runner
 * cannot be reached at all); the driver owns the interpretation of statuses.
 */
export interface RunnerTransport {
  /** `POST /run`: starts the harness; a 200 answer's body is the NDJSON stream from seq 0. */
  start(request: RunnerRunRequest, signal?: AbortSignal): Promise<Response>;
  /** `GET /runs/:runId/stream?fromSeq=N`: the lines after `fromSeq`, then live. 404 when the runner forgot the run. */
  reattach(runId: string, fromSeq: number, signal?: AbortSignal): Promise<Response>;
  /** `POST /runs/:runId/cancel`: stops the harness process. Idempotent. */
  cancel(runId: string): Promise<Response>;
  /**
   * `POST /runs/:runId/tool-results`: a host tool call's outcome, for the
   * harness waiting on it. Over the connection the object already has, so a
   * runner needs no public URL. Idempotent (`{delivered: false}` the second time).
   */
  toolResult(runId: string, result: ToolResult): Promise<Response>;
}

/** The runner's body for a tool result: SPEC's `{toolCallId, output}` or `{toolCallId, error}`. */
export function toolResultBody({ toolCallId, outcome }: ToolResult): string {
  return JSON.stringify({ toolCallId, ...outcome });
}
