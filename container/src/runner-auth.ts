import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { HttpError } from './http-util.ts';

/**
 * The runner trusts only its run object (SPEC "Trust boundaries"): every
 * route but `GET /health` needs `Authorization: Bearer <RUNNER_TOKEN>`.
 * Hand-written rather than `hono/bearer-auth` because the runner is a bare
 * `node:http` server with no framework; the compare is the same idea
 * (digests of equal length compared in constant time).
 */

/** A shorter token is guessable; the Worker derives 64 hex characters, `npm start` generates as many. */
export const MIN_RUNNER_TOKEN_CHARS = 16;

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Throws unless `token` is usable; the message names RUNNER_TOKEN and how to make one. */
export function requireRunnerToken(token: string | undefined): string {
  const trimmed = token?.trim() ?? '';
  if (trimmed.length >= MIN_RUNNER_TOKEN_CHARS) return trimmed;
  const problem = trimmed === '' ? 'RUNNER_TOKEN is not set' : `RUNNER_TOKEN is shorter than ${MIN_RUNNER_TOKEN_CHARS} characters`;
  throw new Error(
    `${problem}: the runner refuses to start without a token, since anyone who reaches its port could otherwise start, read and cancel runs with the harness keys. ` +
      'Set the same RUNNER_TOKEN on the runner and the Worker (e.g. `openssl rand -hex 32`); `npm start` and the container transport make one for you.',
  );
}

/** Checks one request against the token; built once per runner so the token's digest is computed once. */
export function runnerGate(token: string): (req: IncomingMessage, path: string) => void {
  const expected = digest(token);
  return (req, path) => {
    // No browser ever has a reason to talk to the runner; a page that can reach
    // its port (a developer's loopback) must not, even for /health.
    if (req.headers.origin !== undefined) {
      throw new HttpError(403, 'forbidden_origin', 'The runner serves only the relay, never a browser: requests with an Origin header are refused.');
    }
    if (path === '/health' && req.method === 'GET') return;
    const match = BEARER.exec(req.headers.authorization ?? '');
    // Digests have one length, so timingSafeEqual never throws and the compare leaks nothing about the token.
    if (match === null || !timingSafeEqual(digest(match[1]!), expected)) {
      throw new HttpError(401, 'unauthorized', 'The runner needs Authorization: Bearer <RUNNER_TOKEN>, the token the relay was configured with.');
    }
    if (hasBody(req) && !isJson(req.headers['content-type'])) {
      throw new HttpError(415, 'unsupported_media_type', 'A request body must be sent as Content-Type: application/json.');
    }
  };
}

function hasBody(req: IncomingMessage): boolean {
  if (req.headers['transfer-encoding'] !== undefined) return true;
  const length = req.headers['content-length'];
  return length !== undefined && length !== '0';
}

/** `application/json`, with parameters (`; charset=utf-8`) allowed. A missing type is not JSON. */
function isJson(type: string | undefined): boolean {
  return type !== undefined && type.split(';')[0]!.trim().toLowerCase() === 'application/json';
}
