import type { ApiErrorCode } from './errors.ts';
import { CHAT_PROVIDERS, isHarnessName, type ChatProvider, type HarnessName } from './harness.ts';
import { ProtocolError } from './errors.ts';
import { ownRecord } from './json.ts';

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

/**
 * On every stream answer (`POST /run`, `GET /runs/:runId/stream`): the run's
 * state when the answer started. Once it is not `running`, the stream holds
 * every line the harness will write, so the relay tells a dead harness (the
 * stream ends with no terminal chunk) from a dropped connection without
 * reattaching once more.
 */
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

/**
 * `GET /health`: which harnesses this runner can start right now (CLI, key
 * and adapter package present), and for the others why not. A reason names
 * what is missing (a CLI, a variable), never a value; no run is listed.
 */
export interface RunnerHealth {
  ok: true;
  harnesses: HarnessName[];
  /** The `chat` harness's providers whose key this runner has. */
  chatProviders: ChatProvider[];
  unavailable: Partial<Record<HarnessName, string>>;
}

/** Parse, don't cast: a runner's health answer as the Worker's preflight reads it. */
export function parseRunnerHealth(value: unknown): RunnerHealth {
  const body = ownRecord(value, 'health');
  if (body.ok !== true) throw new ProtocolError('health.ok', 'expected true');
  const list = <T>(raw: unknown, field: string, is: (item: unknown) => item is T): T[] => {
    if (!Array.isArray(raw) || !raw.every(is)) throw new ProtocolError(`health.${field}`, 'expected an array of names');
    return raw;
  };
  const unavailable: Partial<Record<HarnessName, string>> = Object.create(null);
  for (const [name, reason] of Object.entries(ownRecord(body.unavailable ?? {}, 'health.unavailable'))) {
    if (isHarnessName(name) && typeof reason === 'string') unavailable[name] = reason;
  }
  return {
    ok: true,
    harnesses: list(body.harnesses, 'harnesses', isHarnessName),
    chatProviders: list(body.chatProviders ?? [], 'chatProviders', (item): item is ChatProvider => (CHAT_PROVIDERS as readonly unknown[]).includes(item)),
    unavailable,
  };
}

/**
 * Codes only the runner answers with; its other errors use `ApiErrorCode`.
 * `run_ended`: a tool result for a run whose harness is no longer there to take it.
 */
export const RUNNER_ERROR_CODES = ['harness_unavailable', 'run_exists', 'spool_truncated', 'run_ended'] as const;
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
