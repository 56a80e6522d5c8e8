/**
 * The error vocabulary of the HTTP API. Every error body is
 * `{"error": {"code", "message"}}`; the code is what a client branches on, the
 * message is a sentence a person can act on.
 */

export const API_ERROR_CODES = [
  'bad_request',
  'invalid_json',
  'invalid_body',
  'invalid_run_id',
  'invalid_from_seq',
  'unknown_harness',
  'invalid_harness_options',
  'option_not_allowed',
  /** A `workspace.secrets` name the operator did not list in `WORKSPACE_SECRETS`. */
  'secret_not_allowed',
  /** A webhook tool whose origin is not in `TOOL_WEBHOOK_ORIGINS` (or a relay with no `TOOL_WEBHOOK_SECRET` to sign it). */
  'tool_not_allowed',
  /** `POST /runs/:runId/tool-results`: the call was answered already (first answer wins). */
  'already_answered',
  /** `POST /runs/:runId/tool-results`: the run is terminal. */
  'run_finished',
  /** `POST /runs/:runId/tool-results`: the run has no such pending client tool call. */
  'tool_call_not_found',
  /** A read-only attach token asked to answer a tool call. */
  'forbidden',
  'harness_unavailable',
  'payload_too_large',
  'unsupported_media_type',
  'not_found',
  'run_not_found',
  'run_unreadable',
  'upgrade_required',
  'idempotency_conflict',
  'thread_busy',
  'thread_full',
  'too_many_runs',
  'too_many_clients',
  'thread_not_found',
  'unauthorized',
  'forbidden_origin',
  'forbidden_host',
  'internal_error',
  'misconfigured',
  'runner_unavailable',
] as const;

export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

export interface ApiErrorBody {
  error: { code: ApiErrorCode; message: string };
}

export function apiErrorBody(code: ApiErrorCode, message: string): ApiErrorBody {
  return { error: { code, message } };
}

/** Codes of the `RUN_ERROR` chunks the relay itself synthesizes (not the harness). */
export const RELAY_RUN_ERROR_CODES = [
  'runner_unavailable',
  'runner_error',
  'runner_lost',
  'stalled',
  'chunk_too_large',
  'invalid_chunk',
  'max_duration_exceeded',
  'idle_timeout',
  'max_events_exceeded',
  'max_bytes_exceeded',
] as const;

export type RelayRunErrorCode = (typeof RELAY_RUN_ERROR_CODES)[number];

/**
 * Codes of the `RUN_ERROR` a real harness's run ends with (SPEC "Harness
 * chunks: one dialect"): the runner maps every provider and CLI failure to one
 * of these and keeps the provider's or CLI's own message.
 */
export const HARNESS_RUN_ERROR_CODES = [
  /** The provider rejected the key. */
  'provider_auth',
  'rate_limited',
  'provider_overloaded',
  /** Any other failure the provider reported. */
  'provider_error',
  /** The CLI failed, or reported an error result (Claude Code's `result` with `is_error: true`). */
  'harness_failed',
  'harness_unavailable',
  /** The workspace's clone or a setup command failed; the message ends with the command's output tail. */
  'workspace_failed',
] as const;

export type HarnessRunErrorCode = (typeof HARNESS_RUN_ERROR_CODES)[number];

export function isHarnessRunErrorCode(value: unknown): value is HarnessRunErrorCode {
  return typeof value === 'string' && (HARNESS_RUN_ERROR_CODES as readonly string[]).includes(value);
}

/**
 * A plain field, not a constructor parameter property: Node runs these files
 * with type stripping only, which rejects parameter properties.
 */
export class ProtocolError extends Error {
  /** The offending field, as a dotted path (`record.lastSeq`). */
  readonly field: string;

  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
    this.name = 'ProtocolError';
  }
}
