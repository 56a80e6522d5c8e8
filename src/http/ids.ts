/** Run ids are random unless an `Idempotency-Key` names the run: then the key decides it. */

function hex(bytes: ArrayBuffer | Uint8Array): string {
  return [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export function newRunId(): string {
  return `run_${hex(crypto.getRandomValues(new Uint8Array(16)))}`;
}

export async function sha256Hex(text: string): Promise<string> {
  return hex(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

/**
 * Deriving the id from the key makes concurrent retries meet in the same
 * object, where `open` is idempotent — no lookup table, no race. The tenant
 * is part of it (tenant-less ids are unchanged), so two tenants using the
 * same key get two run ids and never meet in the runner, which keys by run id.
 */
export async function runIdForKey(key: string, tenant: string | null = null): Promise<string> {
  const scope = tenant === null ? 'idempotency:' : `idempotency@${tenant}:`;
  return `run_${(await sha256Hex(`${scope}${key}`)).slice(0, 32)}`;
}

/** Visible ASCII, 1 to 255 characters: what fits a header and a log line. */
export function isIdempotencyKey(value: string): boolean {
  return /^[\x21-\x7e]{1,255}$/.test(value);
}

/**
 * JSON with object keys sorted, so the same body with its keys in another
 * order hashes the same (an idempotent retry is not a conflict).
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
