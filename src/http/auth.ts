import type { Context, MiddlewareHandler } from 'hono';
import { readConfig, type RelayEnv } from '../config.ts';
import { isTenant, TENANT_HEADER, TENANT_PATTERN } from '../protocol/index.ts';
import { attachTokenKey, verifyAttachToken } from './attach-token.ts';
import { ApiError, runNotFound } from './errors.ts';
import { secretsEqual } from './secret-compare.ts';
import { presentedAttachToken } from './subprotocol.ts';

/**
 * Who is calling, decided once per request by `requireCredentials` and read
 * by the routes. The API token (or auth off) may do everything within the
 * tenant it names; an attach token may only read the run it was minted for.
 */
export type Access =
  | { kind: 'api'; tenant: string | null }
  /**
   * `runId: null`: the request's X-Tenant contradicts the token's, so the token reaches no run.
   * `canRespond`: minted with the right to answer the run's client tool calls (SPEC "Interactive runs").
   */
  | { kind: 'attach'; runId: string | null; tenant: string | null; canRespond: boolean };

export type AppEnv = { Bindings: RelayEnv; Variables: { access: Access } };

const REALM = 'Bearer realm="harness-relay"';

function unauthorized(message: string, invalidToken = false): ApiError {
  return new ApiError(401, 'unauthorized', message, { 'www-authenticate': invalidToken ? `${REALM}, error="invalid_token"` : REALM });
}

function tenantOf(raw: string | undefined): string | null {
  if (raw === undefined) return null;
  if (!isTenant(raw)) throw new ApiError(400, 'bad_request', `The ${TENANT_HEADER} header must match ${TENANT_PATTERN} (letters, digits, _ and -, at most 64).`);
  return raw;
}

/**
 * Order: a presented Authorization header decides (wrong: 401, even with a
 * token beside it); else a presented attach token (bad or expired: 401);
 * else nothing, which is enough only when auth is off. A presented token is
 * checked even with auth off, so a browser app behaves the same in dev.
 */
export const requireCredentials: MiddlewareHandler<AppEnv> = async (c, next) => {
  const config = readConfig(c.env);
  const tenant = tenantOf(c.req.header(TENANT_HEADER));
  const authorization = c.req.header('authorization');
  if (authorization !== undefined) {
    const presented = /^Bearer +(\S+) *$/i.exec(authorization)?.[1];
    if (config.apiToken !== undefined && (presented === undefined || !(await secretsEqual(presented, config.apiToken)))) {
      throw unauthorized('The API token is wrong. Send Authorization: Bearer <API_TOKEN>, the value set with `wrangler secret put API_TOKEN`.', true);
    }
    c.set('access', { kind: 'api', tenant });
    return next();
  }
  const token = presentedAttachToken(c.req.raw);
  if (token !== null) {
    const check = await verifyAttachToken(await attachTokenKey(config), token, Date.now());
    if (!check.ok) {
      throw unauthorized(
        check.reason === 'expired'
          ? 'The attach token has expired. Get a fresh one with POST /runs/:runId/attach-token (API token required).'
          : 'The attach token is not valid (malformed, altered, or signed with another key). Use the attachToken returned by POST /runs.',
        true,
      );
    }
    const { run, tenant: granted, respond } = check.payload;
    const agrees = c.req.header(TENANT_HEADER) === undefined || tenant === granted;
    c.set('access', { kind: 'attach', runId: agrees ? run : null, tenant: granted, canRespond: respond === true });
    return next();
  }
  if (config.apiToken !== undefined) {
    throw unauthorized('This endpoint needs Authorization: Bearer <API_TOKEN>. A browser reading one run can use its attachToken (?token= or the bearer.<token> WebSocket subprotocol).');
  }
  c.set('access', { kind: 'api', tenant });
  return next();
};

/** Routes an attach token cannot use (create, cancel, minting tokens, threads): the API token's tenant. */
export function requireApiAccess(c: Context<AppEnv>): { tenant: string | null } {
  const access = c.get('access');
  if (access.kind !== 'api') {
    throw unauthorized('An attach token only reads its own run (GET /runs/:runId, /ws, /events). This needs Authorization: Bearer <API_TOKEN>.');
  }
  return { tenant: access.tenant };
}

/** For whole prefixes an attach token never reaches (threads): checked before any route. */
export const requireApiToken: MiddlewareHandler<AppEnv> = async (c, next) => {
  requireApiAccess(c);
  return next();
};

/**
 * Reading one run. A run outside the caller's scope answers exactly like an
 * unknown run (the same 404), so a token holder learns nothing about others.
 */
export function requireRunAccess(c: Context<AppEnv>, runId: string): { tenant: string | null; canCancel: boolean; canRespond: boolean } {
  const access = c.get('access');
  if (access.kind === 'api') return { tenant: access.tenant, canCancel: true, canRespond: true };
  if (access.runId !== runId) throw runNotFound(runId);
  return { tenant: access.tenant, canCancel: false, canRespond: access.canRespond };
}

/**
 * Answering the run's client tool calls: the API token, or an attach token
 * minted with that right (the one `POST /runs` returns, or one asked for with
 * `{"respond": true}`). A read-only token on its own run is a `403`; on any
 * other run, the same `404` as an unknown run.
 */
export function requireRespondAccess(c: Context<AppEnv>, runId: string): { tenant: string | null } {
  const { tenant, canRespond } = requireRunAccess(c, runId);
  if (!canRespond) {
    throw new ApiError(403, 'forbidden', 'This attach token only reads the run. Answer with the attachToken POST /runs returned, or mint one with POST /runs/:runId/attach-token and {"respond": true} (API token required).');
  }
  return { tenant };
}

/**
 * The run object's name. Tenant-less runs keep the bare run id, so runs (and
 * legacy `rec:<runId>` records) written before tenants existed still resolve.
 * A tenant cannot contain `/`, so no tenant's name can collide with another's.
 */
export function runObjectName(tenant: string | null, runId: string): string {
  return tenant === null ? runId : `${tenant}/${runId}`;
}

export function runStub(env: RelayEnv, tenant: string | null, runId: string) {
  return env.RUNS.get(env.RUNS.idFromName(runObjectName(tenant, runId)));
}
