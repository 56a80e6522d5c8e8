/**
 * Reconnect delays: exponential backoff with full jitter (a uniform draw in
 * `[0, min(maxMs, baseMs * 2^attempt)]`), so a fleet of tabs that lost the
 * same server does not come back in lockstep.
 */
export interface BackoffOptions {
  /** Ceiling of the first delay, ms. */
  baseMs?: number;
  /** Ceiling of any delay, ms. */
  maxMs?: number;
  /** A number in [0, 1); injectable for tests. */
  random?: () => number;
}

export const BACKOFF_BASE_MS = 250;
export const BACKOFF_MAX_MS = 10_000;

export class Backoff {
  readonly #baseMs: number;
  readonly #maxMs: number;
  readonly #random: () => number;
  #attempt = 0;

  constructor(options: BackoffOptions = {}) {
    this.#baseMs = options.baseMs ?? BACKOFF_BASE_MS;
    this.#maxMs = options.maxMs ?? BACKOFF_MAX_MS;
    this.#random = options.random ?? Math.random;
  }

  /** The delay before the next attempt; each call widens the window until the cap. */
  next(): number {
    // 2^attempt overflows nothing here: the cap is reached long before 2^1024.
    const ceiling = Math.min(this.#maxMs, this.#baseMs * 2 ** this.#attempt);
    this.#attempt = Math.min(this.#attempt + 1, 30);
    return Math.floor(this.#random() * ceiling);
  }

  /** After progress (a frame delivered), the next failure starts from the base again. */
  reset(): void {
    this.#attempt = 0;
  }
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
