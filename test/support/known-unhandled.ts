/**
 * Unhandled rejections that are the libraries', not this project's, and that
 * the sandbox project provokes by design. @cloudflare/containers 0.3.7's
 * `containerFetch` pipes each response body through an identity stream with
 * `res.body.pipeTo(writable).finally(…)` and no catch, so a consumer that
 * cancels a body — the SDK's `waitForPort` does after `ready`, the relay does
 * when a run ends or is cancelled — leaves "Stream was cancelled." unhandled
 * (on Cloudflare, a logged rejection); a body cut by a killed runner or a
 * stopped container leaves "Network connection lost." the same way. Only
 * those two messages, only from test/sandbox files; everything else still
 * fails the run.
 */
const LIBRARY_PIPE_REJECTIONS = new Set(['Stream was cancelled.', 'Network connection lost.']);

export function ignoreKnownUnhandled(error: { message?: unknown; VITEST_TEST_PATH?: unknown }): boolean | void {
  const path = typeof error.VITEST_TEST_PATH === 'string' ? error.VITEST_TEST_PATH : '';
  if (typeof error.message === 'string' && LIBRARY_PIPE_REJECTIONS.has(error.message) && path.includes('/test/sandbox/')) return false;
}
