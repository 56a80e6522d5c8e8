import type { RunStatus } from '@tanstack/ai';
import { isTerminalRunStatus } from '@tanstack/ai';

/**
 * One alarm serves every timer of a run object: the stall watchdog, the
 * reattach check (and its retry after a runner restart) and retention.
 * Deadlines are derived from the record and the pump's state, so nothing but
 * the alarm itself is written to schedule them.
 */
export interface WatchdogInput {
  status: RunStatus;
  finishedAt: number | undefined;
  now: number;
  /** A pump is reading the runner in this instance of the object. */
  pumpActive: boolean;
  /** Last sign of life from the runner, epoch ms: a byte read, or the last durable append. */
  lastByteAt: number;
  stallTimeoutMs: number;
  runTtlMs: number;
  /** The run ended and its thread has not acknowledged it yet. */
  threadPending?: boolean;
  /** A reattach found the runner restarting: when to try again (epoch ms). */
  retryAt?: number | null;
  /** When the run started and when its harness last wrote a chunk (keep-alives are not chunks), epoch ms. */
  startedAt?: number;
  lastChunkAt?: number;
  /** RUN_MAX_SECONDS and IDLE_TIMEOUT_SECONDS, in ms; unset: no such limit. */
  runMaxMs?: number;
  idleTimeoutMs?: number;
}

export type WatchdogAction = 'expire' | 'reattach' | 'stall' | 'give-up' | 'notify' | 'max-duration' | 'idle' | null;

/**
 * While a run is live the alarm comes back at least this often, so a pump
 * lost to an eviction or a deploy is noticed and reattached within it.
 */
export const REATTACH_CHECK_MS = 30_000;

/** After a failed reattach (runner restarting), try again this soon. */
export const REATTACH_RETRY_MS = 2_000;

export function decide(input: WatchdogInput): { action: WatchdogAction; next: number | null } {
  const { status, finishedAt, now, pumpActive, lastByteAt, stallTimeoutMs, runTtlMs } = input;
  if (isTerminalRunStatus(status)) {
    const expiresAt = (finishedAt ?? now) + runTtlMs;
    if (now >= expiresAt) return { action: 'expire', next: null };
    if (input.threadPending) return { action: 'notify', next: Math.min(expiresAt, now + REATTACH_CHECK_MS) };
    return { action: null, next: expiresAt };
  }
  // The run's own limits come first: they hold whether or not the runner can be reached.
  const maxAt = input.startedAt !== undefined && input.runMaxMs !== undefined ? input.startedAt + input.runMaxMs : Infinity;
  const idleAt = input.lastChunkAt !== undefined && input.idleTimeoutMs !== undefined ? input.lastChunkAt + input.idleTimeoutMs : Infinity;
  if (now >= maxAt) return { action: 'max-duration', next: null };
  if (now >= idleAt) return { action: 'idle', next: null };
  const limitAt = Math.min(maxAt, idleAt);
  const check = Math.min(now + Math.min(stallTimeoutMs, REATTACH_CHECK_MS), limitAt);
  const stallAt = lastByteAt + stallTimeoutMs;
  // The same silence budget covers a runner that cannot be reattached.
  if (!pumpActive) return now >= stallAt ? { action: 'give-up', next: null } : { action: 'reattach', next: Math.min(stallAt, check, input.retryAt ?? check) };
  if (now >= stallAt) return { action: 'stall', next: null };
  return { action: null, next: Math.min(stallAt, check) };
}
