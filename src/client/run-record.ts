import { parseRunView, type RunView } from '../protocol/index.ts';

/** How long a connect waits for the run record before treating it as unreadable. */
const RECORD_TIMEOUT_MS = 10_000;

/** The relay answered 404 for the run: it does not exist, expired, or is outside this token's scope. */
export class RunNotFoundError extends Error {
  readonly code = 'run_not_found';
  readonly runId: string;
  constructor(runId: string) {
    super(`Run ${runId} was not found: it does not exist, its retention expired, or this token may not read it.`);
    this.name = 'RunNotFoundError';
    this.runId = runId;
  }
}

export interface RunAddress {
  baseUrl: string;
  runId: string;
  token?: string;
}

/**
 * `${baseUrl}/runs/:id${suffix}`: a path prefix in `baseUrl` is kept, a
 * relative `baseUrl` resolves against the page, the tail gets `ws:`/`wss:`,
 * and `token` travels as `?token=`.
 */
export function runUrl(address: RunAddress, suffix: string): string {
  const here = (globalThis as { location?: { href: string } }).location?.href;
  const base = new URL(address.baseUrl, here);
  const url = new URL(`${base.pathname.replace(/\/+$/, '')}/runs/${encodeURIComponent(address.runId)}${suffix}`, base);
  if (suffix.startsWith('/ws')) url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  if (address.token !== undefined) url.searchParams.set('token', address.token);
  return url.href;
}

/**
 * `GET /runs/:id`: the record, `'not_found'` for a 404, or `null` when it
 * cannot be read (network, timeout, another status). Never throws.
 */
export async function readRunRecord(fetchImpl: typeof fetch, url: string, stop: AbortSignal): Promise<RunView | 'not_found' | null> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), RECORD_TIMEOUT_MS);
  const onStop = () => timeout.abort();
  stop.addEventListener('abort', onStop, { once: true });
  try {
    const res = await fetchImpl(url, { signal: timeout.signal, headers: { accept: 'application/json' } });
    if (res.status === 404) return 'not_found';
    return res.ok ? parseRunView(await res.json()) : null;
  } catch {
    return null;
  } finally {
    clearTimeout(timer);
    stop.removeEventListener('abort', onStop);
  }
}
