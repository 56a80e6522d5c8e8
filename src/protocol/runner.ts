import type { ApiErrorCode } from './errors.ts';
import { isHarnessName, type HarnessName } from './harness.ts';
import { ProtocolError } from './errors.ts';
import { isObject } from './json.ts';

/**
 * The runner's own answers besides the NDJSON stream (see `RunnerRunRequest`
 * for what goes in). Streams carry one `StreamChunk` per line; these are the
 * JSON bodies and the header around them.
 *
 * - `running`: the harness process is alive and may write more lines.
 * - `finished`: its last line is a terminal chunk (`RUN_FINISHED` or `RUN_ERROR`).
 * - `crashed`: the harness process ended without a terminal chunk.
 * - `cancelled`: stopped by `POST /runs/:runId/cancel`; no line follows.
 */
export const RUNNER_RUN_STATES = ['running', 'finished', 'crashed', 'cancelled'] as const;
export type RunnerRunState = (typeof RUNNER_RUN_STATES)[number];

/**
 * Longest line (one chunk) either side accepts, in UTF-8 bytes. The runner
 * ends a run whose harness writes a longer one with a `chunk_too_large`
 * `RUN_ERROR`; the relay applies the same bound to what it reads.
 */
export const RUNNER_MAX_LINE_BYTES = 1_048_576;

/** On every stream answer (`POST /run`, `GET /runs/:runId/stream`): the run's state when the answer started. */
export const RUNNER_RUN_STATE_HEADER = 'x-runner-run-state';

/** `GET /runs/:runId` and `POST /runs/:runId/cancel`. `lastSeq` is `-1` before the first line. */
export interface RunnerRunStatus {
  runId: string;
  threadId: string;
  harness: HarnessName;
  state: RunnerRunState;
  lastSeq: number;
  /** The harness process id while it runs; `null` once it has exited. */
  pid: number | null;
  startedAt: number;
  endedAt?: number;
}

/** `GET /health`: the harnesses this runner can start right now (CLI and key present). */
export interface RunnerHealth {
  ok: true;
  harnesses: HarnessName[];
}

/** Codes only the runner answers with; its other errors use `ApiErrorCode`. */
export const RUNNER_ERROR_CODES = ['harness_unavailable', 'run_exists', 'spool_truncated'] as const;
export type RunnerErrorCode = (typeof RUNNER_ERROR_CODES)[number];

export interface RunnerErrorBody {
  error: { code: ApiErrorCode | RunnerErrorCode; message: string };
}

export function runnerErrorBody(code: ApiErrorCode | RunnerErrorCode, message: string): RunnerErrorBody {
  return { error: { code, message } };
}

export function isRunnerRunState(value: unknown): value is RunnerRunState {
  return typeof value === 'string' && (RUNNER_RUN_STATES as readonly string[]).includes(value);
}

function requireInt(value: unknown, field: string, min: number): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) throw new ProtocolError(field, `expected an integer >= ${min}`);
  return value;
}

/** Parse, don't cast: a runner status as the relay receives it. */
export function parseRunnerRunStatus(value: unknown, path = 'status'): RunnerRunStatus {
  if (!isObject(value)) throw new ProtocolError(path, 'expected an object');
  const { runId, threadId, harness, state, pid, endedAt } = value;
  if (typeof runId !== 'string' || runId === '') throw new ProtocolError(`${path}.runId`, 'expected a non-empty string');
  if (typeof threadId !== 'string' || threadId === '') throw new ProtocolError(`${path}.threadId`, 'expected a non-empty string');
  if (!isHarnessName(harness)) throw new ProtocolError(`${path}.harness`, 'expected a harness name');
  if (!isRunnerRunState(state)) throw new ProtocolError(`${path}.state`, `expected one of ${RUNNER_RUN_STATES.join(', ')}`);
  const status: RunnerRunStatus = {
    runId,
    threadId,
    harness,
    state,
    lastSeq: requireInt(value.lastSeq, `${path}.lastSeq`, -1),
    pid: pid === null ? null : requireInt(pid, `${path}.pid`, 1),
    startedAt: requireInt(value.startedAt, `${path}.startedAt`, 0),
  };
  if (endedAt !== undefined) status.endedAt = requireInt(endedAt, `${path}.endedAt`, 0);
  return status;
}
