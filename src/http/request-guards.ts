import type { Context, MiddlewareHandler } from 'hono';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { readConfig } from '../config.ts';
import type { AppEnv } from './auth.ts';
import { ApiError } from './errors.ts';

/**
 * The browser-facing boundary, before credentials are looked at: a local
 * relay with auth off is one `fetch` away from every page its owner opens,
 * so neither DNS rebinding nor a cross-site request may reach a route.
 */

/** SPEC: with auth off, only these `Host` names are served (any port). */
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function hostnameOf(c: Context<AppEnv>): string {
  const host = c.req.header('host') ?? new URL(c.req.url).host;
  try {
    return new URL(`http://${host}`).hostname;
  } catch {
    return '';
  }
}

/**
 * DNS rebinding: a page on `evil.test` whose name now resolves to 127.0.0.1
 * is same-origin with itself, so only the `Host` it sends gives it away.
 * With auth on a rebound page has no token, so any host may be served.
 */
export const requireLoopbackHostWhenOpen: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (readConfig(c.env).apiToken === undefined && !LOOPBACK_HOSTS.has(hostnameOf(c))) {
    throw new ApiError(
      403,
      'forbidden_host',
      `With auth off (API_TOKEN unset) the relay answers only loopback hosts (localhost, 127.0.0.1, [::1]); this request named ${JSON.stringify(c.req.header('host') ?? '')}. Set API_TOKEN to serve other hosts.`,
    );
  }
  return next();
};

/** The relay's own origin (the demo page it serves), or one listed in `ALLOWED_ORIGINS`. */
export function isTrustedOrigin(origin: string, c: Context<AppEnv>): boolean {
  // The own origin comes from the URL, whose host the guard above has checked when auth is off.
  return origin === new URL(c.req.url).origin || readConfig(c.env).allowedOrigins.includes(origin);
}

function changesState(c: Context<AppEnv>): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(c.req.method) || c.req.header('upgrade')?.toLowerCase() === 'websocket';
}

/**
 * `hono/csrf` is the stock check for what it was made for: a browser's
 * form-like request (a missing type counts as text/plain), judged by
 * `Origin` and `Sec-Fetch-Site`. It is applied to browser requests only
 * (they send `Sec-Fetch-Site`): on others it would refuse every bodiless POST
 * from curl, a backend or the SDK in Node, which send neither header. And it
 * looks at neither JSON bodies nor WebSocket upgrades (GETs, which no CORS
 * protects), so SPEC's rule is hand-written beside it: an `Origin` that is
 * present must be trusted on every state-changing request and every upgrade.
 */
const formCsrf = csrf({ origin: isTrustedOrigin, secFetchSite: 'same-origin' });

export const requireTrustedOrigin: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!changesState(c)) return next();
  const origin = c.req.header('origin');
  if (origin !== undefined && !isTrustedOrigin(origin, c)) throw forbiddenOrigin(c, origin);
  if (c.req.header('sec-fetch-site') === undefined) return next();
  try {
    return await formCsrf(c, next);
  } catch (error) {
    if (error instanceof HTTPException && error.status === 403) throw forbiddenOrigin(c, origin ?? 'a cross-site page');
    throw error;
  }
};

function forbiddenOrigin(c: Context<AppEnv>, origin: string): ApiError {
  const what = c.req.header('upgrade') ? 'WebSocket connections' : `${c.req.method} requests`;
  return new ApiError(403, 'forbidden_origin', `${what} from ${origin} are not allowed; add it to ALLOWED_ORIGINS to allow it.`);
}

function hasBody(request: Request): boolean {
  const length = request.headers.get('content-length');
  return request.body !== null && length !== '0';
}

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

/**
 * A body must say it is JSON. A page can send text/plain (or no type) with
 * `mode: 'no-cors'`, without a preflight, so a body of any other type is
 * refused before a route could read it as JSON.
 */
export const requireJsonBody: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!hasBody(c.req.raw)) return next();
  const type = c.req.header('content-type');
  if (type === undefined || !JSON_TYPE.test(type)) {
    throw new ApiError(415, 'unsupported_media_type', `Send the body as Content-Type: application/json (got ${type === undefined ? 'no Content-Type' : type}).`);
  }
  return next();
};
