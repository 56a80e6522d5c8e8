import { tmpdir } from 'node:os';
import { RUNNER_MAX_LINE_BYTES } from '../../src/protocol/index.ts';

/**
 * The runner's settings, read once from the environment. Everything but
 * RUNNER_TOKEN has a default.
 */
export interface RunnerConfig {
  port: number;
  host: string;
  /** A blank line goes to every open stream when its run has been quiet this long. */
  keepAliveMs: number;
  /** How long a finished run's lines stay available for reattach. */
  spoolTtlMs: number;
  /** At most this many finished runs are kept; the oldest go first. */
  maxFinishedRuns: number;
  /** Per run, memory and disk: older lines are dropped past this, and a reattach before them answers 410. */
  maxSpoolBytes: number;
  /** Per live run: lines past this many bytes in the heap are written to a segment file; an ended run keeps none in the heap. */
  spoolMemoryBytes: number;
  /** All ended runs' spool files together: the oldest ended runs are forgotten past this (checked as a run ends). */
  spoolDiskMaxBytes: number;
  /** Where the runner makes its own spool directory (deleted at shutdown). */
  spoolDir: string;
  /** One line longer than this ends the run with a `chunk_too_large` error. */
  maxLineBytes: number;
  /** Between SIGTERM and SIGKILL when a harness is stopped. */
  killGraceMs: number;
  /** Where the CLI harnesses work when the request names no `workspace`: `<root>/<threadId>`. */
  workspaceRoot: string | undefined;
  /** RUNNER_TOKEN: the bearer token every route but `/health` requires. The runner refuses to start without it. */
  token: string | undefined;
}

export const DEFAULT_PORT = 8788;
export const DEFAULT_HOST = '127.0.0.1';
/** Well under the relay's 120 s stall timeout, so an idle but healthy run is never mistaken for a stalled one. */
export const DEFAULT_KEEPALIVE_MS = 10_000;
/**
 * The reattach window of an ended run. The relay reattaches within seconds of
 * a cut (REATTACH_RETRY_MS) and notices a silent runner within its 120 s stall
 * timeout; ten minutes covers both several times over plus a Durable Object
 * restart, and no one reads an ended run's spool after its object has stored it.
 */
export const DEFAULT_SPOOL_TTL_MS = 10 * 60 * 1000;
export const DEFAULT_MAX_FINISHED_RUNS = 200;
/** Covers a long agent run many times over; a benchmark that outgrows it only loses its oldest lines. */
export const DEFAULT_MAX_SPOOL_BYTES = 256 * 1024 * 1024;
/** A reader that keeps up is served from memory; 1 MiB is many chunks, and 200 live runs cost 200 MiB at most. */
export const DEFAULT_SPOOL_MEMORY_BYTES = 1024 * 1024;
/** Four full-size ended spools: well inside the smallest container disk, which the workspaces share. */
export const DEFAULT_SPOOL_DISK_MAX_BYTES = 1024 * 1024 * 1024;
/** The relay's own bound, so an oversized chunk ends the run with the runner's RUN_ERROR rather than a cut stream. */
export const DEFAULT_MAX_LINE_BYTES = RUNNER_MAX_LINE_BYTES;
export const DEFAULT_KILL_GRACE_MS = 3_000;

type Env = Record<string, string | undefined>;

function intFrom(env: Env, names: string[], fallback: number, min: number): number {
  for (const name of names) {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') continue;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min) throw new Error(`${name}: expected an integer >= ${min}, got ${JSON.stringify(raw)}`);
    return value;
  }
  return fallback;
}

/** RUNNER_PORT wins over PORT: the local stack also sets PORT for the Worker itself. */
export function readRunnerConfig(env: Env = process.env): RunnerConfig {
  return {
    port: intFrom(env, ['RUNNER_PORT', 'PORT'], DEFAULT_PORT, 0),
    host: env.RUNNER_HOST?.trim() || DEFAULT_HOST,
    keepAliveMs: intFrom(env, ['RUNNER_KEEPALIVE_MS'], DEFAULT_KEEPALIVE_MS, 1),
    spoolTtlMs: intFrom(env, ['RUNNER_SPOOL_TTL_MS'], DEFAULT_SPOOL_TTL_MS, 0),
    maxFinishedRuns: intFrom(env, ['RUNNER_SPOOL_MAX_RUNS'], DEFAULT_MAX_FINISHED_RUNS, 1),
    maxSpoolBytes: intFrom(env, ['RUNNER_SPOOL_MAX_BYTES'], DEFAULT_MAX_SPOOL_BYTES, 1024),
    spoolMemoryBytes: intFrom(env, ['RUNNER_SPOOL_MEMORY_BYTES'], DEFAULT_SPOOL_MEMORY_BYTES, 1024),
    spoolDiskMaxBytes: intFrom(env, ['RUNNER_SPOOL_DISK_MAX_BYTES'], DEFAULT_SPOOL_DISK_MAX_BYTES, 1024),
    spoolDir: env.RUNNER_SPOOL_DIR?.trim() || tmpdir(),
    maxLineBytes: intFrom(env, ['RUNNER_MAX_LINE_BYTES'], DEFAULT_MAX_LINE_BYTES, 1024),
    killGraceMs: intFrom(env, ['RUNNER_KILL_GRACE_MS'], DEFAULT_KILL_GRACE_MS, 0),
    workspaceRoot: env.RUNNER_WORKSPACE_ROOT?.trim() || undefined,
    token: env.RUNNER_TOKEN?.trim() || undefined,
  };
}
