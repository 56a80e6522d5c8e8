import { isRunId } from './ids.ts';
import { ProtocolError } from './errors.ts';
import { ownRecord } from './json.ts';

/**
 * Credentials on the wire. The API takes `Authorization: Bearer <API_TOKEN>`
 * and an optional tenant header; a browser reads one run with that run's
 * attach token, which it can put where a browser can: the query string, or a
 * WebSocket subprotocol (an upgrade cannot carry an Authorization header).
 */

/** `X-Tenant`: which tenant an API request acts for. */
export const TENANT_HEADER = 'x-tenant';
export const TENANT_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function isTenant(value: unknown): value is string {
  return typeof value === 'string' && TENANT_PATTERN.test(value);
}

/** The subprotocol the relay speaks; the server echoes it in the 101 (strict clients require an echo). */
export const RELAY_SUBPROTOCOL = 'harness-relay';

/**
 * An attach token offered as a subprotocol: `bearer.<token>`. Every character
 * of a token (base64url and `.`) is a valid subprotocol character (RFC 6455 §4.1).
 */
export const BEARER_SUBPROTOCOL_PREFIX = 'bearer.';

/**
 * What a client passes as the WebSocket `protocols` argument to attach with a token.
 *
 * @example
 * ```ts
 * new WebSocket(`wss://relay.example.com/runs/${runId}/ws`, attachSubprotocols(attachToken));
 * ```
 */
export function attachSubprotocols(token: string): string[] {
  return [RELAY_SUBPROTOCOL, `${BEARER_SUBPROTOCOL_PREFIX}${token}`];
}

/**
 * The signed part of an attach token: version, run, tenant (`null`: none) and
 * expiry in epoch seconds. The token is `base64url(JSON) + '.' + base64url(HMAC-SHA256)`.
 */
export interface AttachTokenPayload {
  v: 1;
  run: string;
  tenant: string | null;
  exp: number;
  /** SPEC "Interactive runs": the holder may answer the run's client tool calls. Absent: read-only. */
  respond?: true;
}

/** `POST /runs/:runId/attach-token`. `expiresAt` is epoch ms, like the record's timestamps. */
export interface AttachTokenResponse {
  attachToken: string;
  expiresAt: number;
}

export function parseAttachTokenPayload(value: unknown): AttachTokenPayload {
  const { v, run, tenant, exp, respond } = ownRecord(value, 'token');
  if (v !== 1) throw new ProtocolError('token.v', 'expected 1');
  if (!isRunId(run)) throw new ProtocolError('token.run', 'expected a run id');
  if (tenant !== null && !isTenant(tenant)) throw new ProtocolError('token.tenant', `expected null or a string matching ${TENANT_PATTERN}`);
  if (typeof exp !== 'number' || !Number.isSafeInteger(exp) || exp <= 0) throw new ProtocolError('token.exp', 'expected epoch seconds');
  if (respond !== undefined && respond !== true) throw new ProtocolError('token.respond', 'expected true or nothing');
  return respond === true ? { v, run, tenant, exp, respond } : { v, run, tenant, exp };
}
