import { describe, expect, it } from 'vitest';
import { decide, REATTACH_CHECK_MS, type WatchdogInput } from '../../src/run/watchdog.ts';

const NOW = 10_000_000;
const STALL = 120_000;
const TTL = 7 * 24 * 3_600_000;

function input(overrides: Partial<WatchdogInput>): WatchdogInput {
  return { status: 'running', finishedAt: undefined, now: NOW, pumpActive: true, lastByteAt: NOW, stallTimeoutMs: STALL, runTtlMs: TTL, ...overrides };
}

describe('watchdog decide', () => {
  describe.each(['completed', 'failed', 'aborted'] as const)('a %s run', (status) => {
    it('waits for its TTL, counted from finishedAt', () => {
      expect(decide(input({ status, finishedAt: NOW - 1_000 }))).toEqual({ action: null, next: NOW - 1_000 + TTL });
      expect(decide(input({ status, finishedAt: NOW - TTL + 1 }))).toEqual({ action: null, next: NOW + 1 });
    });

    it('expires once the TTL has passed, whatever the pump', () => {
      expect(decide(input({ status, finishedAt: NOW - TTL }))).toEqual({ action: 'expire', next: null });
      expect(decide(input({ status, finishedAt: NOW - TTL - 5, pumpActive: false, lastByteAt: 0 }))).toEqual({ action: 'expire', next: null });
    });

    it('counts from now when finishedAt is missing', () => {
      expect(decide(input({ status, finishedAt: undefined }))).toEqual({ action: null, next: NOW + TTL });
    });
  });

  describe('a running run with no pump in this instance', () => {
    it('reattaches, and comes back at the earlier of the stall deadline and the periodic check', () => {
      expect(decide(input({ pumpActive: false, lastByteAt: NOW }))).toEqual({ action: 'reattach', next: NOW + REATTACH_CHECK_MS });
      expect(decide(input({ pumpActive: false, lastByteAt: NOW - STALL + 5_000 }))).toEqual({ action: 'reattach', next: NOW + 5_000 });
    });

    it('gives up once the stall budget is spent', () => {
      expect(decide(input({ pumpActive: false, lastByteAt: NOW - STALL }))).toEqual({ action: 'give-up', next: null });
      expect(decide(input({ pumpActive: false, lastByteAt: 0 }))).toEqual({ action: 'give-up', next: null });
    });
  });

  describe('a running run with a pump', () => {
    it('stalls once nothing arrived for the stall timeout', () => {
      expect(decide(input({ lastByteAt: NOW - STALL }))).toEqual({ action: 'stall', next: null });
      expect(decide(input({ lastByteAt: NOW - STALL - 1 }))).toEqual({ action: 'stall', next: null });
    });

    it('does nothing before, and comes back at min(stallAt, check)', () => {
      expect(decide(input({ lastByteAt: NOW }))).toEqual({ action: null, next: NOW + REATTACH_CHECK_MS });
      expect(decide(input({ lastByteAt: NOW - STALL + 1 }))).toEqual({ action: null, next: NOW + 1 });
      expect(decide(input({ lastByteAt: NOW - STALL + REATTACH_CHECK_MS + 1 }))).toEqual({ action: null, next: NOW + REATTACH_CHECK_MS });
    });

    it('checks no later than the stall timeout when it is shorter than the periodic check', () => {
      const short = 5_000;
      expect(decide(input({ stallTimeoutMs: short, lastByteAt: NOW }))).toEqual({ action: null, next: NOW + short });
      expect(decide(input({ stallTimeoutMs: short, lastByteAt: NOW, pumpActive: false }))).toEqual({ action: 'reattach', next: NOW + short });
    });
  });

  describe('the run limits', () => {
    const limits = { startedAt: NOW - 10_000, lastChunkAt: NOW - 1_000, runMaxMs: 60_000, idleTimeoutMs: 20_000 };

    it('wakes at the nearer of the run deadline, the idle deadline and the stall check', () => {
      expect(decide(input({ ...limits, idleTimeoutMs: 5_000 }))).toEqual({ action: null, next: NOW + 4_000 });
      expect(decide(input({ ...limits, runMaxMs: 12_000 }))).toEqual({ action: null, next: NOW + 2_000 });
      expect(decide(input({ ...limits, pumpActive: false, runMaxMs: 12_000 }))).toEqual({ action: 'reattach', next: NOW + 2_000 });
    });

    it('ends a run past RUN_MAX_SECONDS, a pump or not', () => {
      for (const pumpActive of [true, false]) {
        expect(decide(input({ ...limits, pumpActive, startedAt: NOW - 60_000 })).action).toBe('max-duration');
      }
    });

    it('ends a run whose harness wrote no chunk for IDLE_TIMEOUT_SECONDS, however recent the last keep-alive byte', () => {
      expect(decide(input({ ...limits, lastByteAt: NOW, lastChunkAt: NOW - 20_000 })).action).toBe('idle');
      expect(decide(input({ ...limits, lastByteAt: NOW, lastChunkAt: NOW - 19_999 })).action).toBeNull();
    });

    it('leaves a terminal run to retention', () => {
      expect(decide(input({ ...limits, status: 'failed', finishedAt: NOW, startedAt: 0, lastChunkAt: 0 }))).toEqual({ action: null, next: NOW + TTL });
    });
  });
});
