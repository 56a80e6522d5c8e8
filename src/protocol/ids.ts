/**
 * Identifier rules shared by every side of the wire. Ids travel in URLs, in
 * Durable Object names and in runner paths, so they are restricted to a
 * URL-safe alphabet and a bounded length.
 */

/** Run ids are minted by the Worker: `run_` and 32 lowercase hex digits (128 bits). */
export const RUN_ID_PATTERN = /^run_[0-9a-f]{32}$/;

/** SPEC: `[A-Za-z0-9_-]{1,128}`. */
export const THREAD_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;

export function isRunId(value: unknown): value is string {
  return typeof value === 'string' && RUN_ID_PATTERN.test(value);
}

export function isThreadId(value: unknown): value is string {
  return typeof value === 'string' && THREAD_ID_PATTERN.test(value);
}

/** `fromSeq` / `offset` / `Last-Event-ID`: an integer `>= -1`, written in decimal. */
export function parseSeqCursor(raw: string | null | undefined): number | null {
  if (raw === null || raw === undefined || raw === '') return -1;
  if (!/^-?\d{1,15}$/.test(raw)) return null;
  const value = Number(raw);
  return Number.isSafeInteger(value) && value >= -1 ? value : null;
}
