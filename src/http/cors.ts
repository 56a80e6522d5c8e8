import type { MiddlewareHandler } from 'hono';
import { readConfig } from '../config.ts';
import type { AppEnv } from './auth.ts';

/**
 * Cross-origin policy: `ALLOWED_ORIGINS` lists exact origins; nothing else is
 * matched (no wildcard, no suffix). Credentials are explicit tokens, never
 * cookies, so `Access-Control-Allow-Credentials` is never sent. `hono/cors`
 * is not used: it answers a foreign origin's preflight with the allowed
 * methods and headers anyway.
 */

export const CORS_ALLOWED_METHODS = 'GET, POST';
export const CORS_ALLOWED_HEADERS = 'Authorization, Content-Type, Idempotency-Key, X-Tenant, Last-Event-ID';
/** Readable by a page: where a new run lives, and why a request was refused. */
const CORS_EXPOSED_HEADERS = 'Location, WWW-Authenticate';
/** Browsers cap this anyway (Chromium at 2 h); 10 min bounds how long a removed origin keeps working. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/**
 * Registered before authentication: a preflight carries no credentials by
 * design, so it must be answered before they are asked for.
 */
export const cors: MiddlewareHandler<AppEnv> = async (c, next) => {
  const { allowedOrigins } = readConfig(c.env);
  const origin = c.req.header('origin');
  const allowed = origin !== undefined && allowedOrigins.includes(origin);
  if (c.req.method === 'OPTIONS' && c.req.header('access-control-request-method') !== undefined) {
    const headers = new Headers({ vary: 'Origin' });
    if (allowed) {
      headers.set('access-control-allow-origin', origin);
      headers.set('access-control-allow-methods', CORS_ALLOWED_METHODS);
      headers.set('access-control-allow-headers', CORS_ALLOWED_HEADERS);
      headers.set('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    return new Response(null, { status: 204, headers });
  }
  await next();
  const res = c.res;
  if (res.status === 101) return;
  const headers = new Headers(res.headers);
  headers.append('vary', 'Origin');
  if (allowed) {
    headers.set('access-control-allow-origin', origin);
    headers.set('access-control-expose-headers', CORS_EXPOSED_HEADERS);
  }
  // Reset first: Hono's setter would copy the old headers back over these.
  c.res = undefined;
  c.res = new Response(res.body, { status: res.status, statusText: res.statusText, headers });
};
