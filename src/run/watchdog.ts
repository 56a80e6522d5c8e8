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
}

export type WatchdogAction = 'expire' | 'reattach' | 'stall' | 'give-up' | 'notify' | null;

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
  const check = now + Math.min(stallTimeoutMs, REATTACH_CHECK_MS);
  const stallAt = lastByteAt + stallTimeoutMs;
  // The same silence budget covers a runner that cannot be reattached.
  if (!pumpActive) return now >= stallAt ? { action: 'give-up', next: null } : { action: 'reattach', next: Math.min(stallAt, check, input.retryAt ?? check) };
  if (now >= stallAt) return { action: 'stall', next: null };
  return { action: null, next: Math.min(stallAt, check) };
}
