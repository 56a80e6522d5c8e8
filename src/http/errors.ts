import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ConfigError } from '../config.ts';
import { apiErrorBody, toolAnswerRefusal, type ApiErrorCode, type ToolAnswerRefusal } from '../protocol/index.ts';

/**
 * An error that is an answer: a status, a stable code and a sentence a person
 * can act on. Thrown anywhere in a route, rendered once by `onError`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: ApiErrorCode,
    message: string,
    /** Headers the answer needs, e.g. `WWW-Authenticate` on a 401. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export function errorResponse(status: ContentfulStatusCode, code: ApiErrorCode, message: string, headers: Record<string, string> = {}): Response {
  return Response.json(apiErrorBody(code, message), { status, headers });
}

export function onError(error: Error, c: Context): Response {
  if (error instanceof ApiError) return errorResponse(error.status, error.code, error.message, error.headers);
  // A Hono middleware's own refusal, in this API's JSON shape rather than its plain text.
  if (error instanceof HTTPException && error.status < 500) {
    return errorResponse(error.status, error.status === 413 ? 'payload_too_large' : 'bad_request', error.message || `The request was refused (${error.status}).`);
  }
  // The path, never the query string: it may carry an attach token.
  console.error(`${c.req.method} ${new URL(c.req.url).pathname} failed:`, error);
  // The owner's configuration is wrong: say which variable, so they can fix it.
  if (error instanceof ConfigError) return errorResponse(500, 'misconfigured', error.message);
  return errorResponse(500, 'internal_error', 'The relay hit an unexpected error; it was logged. Retry, and report it if it persists.');
}

export function notFound(c: Context): Response {
  return errorResponse(404, 'not_found', `No route for ${c.req.method} ${new URL(c.req.url).pathname}. See the README for the API.`);
}

/** SPEC: a malformed run id answers exactly like an unknown one. */
export function runNotFound(runId: string): ApiError {
  return new ApiError(404, 'run_not_found', `No run ${runId} exists (it may have expired). Start one with POST /runs.`);
}

/** A client tool call's answer that was not taken (already answered, no such call, run over). */
export function toolAnswerError(kind: ToolAnswerRefusal, toolCallId: string): ApiError {
  const { status, code, message } = toolAnswerRefusal(kind, toolCallId);
  return new ApiError(status, code, message);
}
