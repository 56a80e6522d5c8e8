import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { MAX_CREATE_RUN_BYTES, ProtocolError, parseRequestJson } from '../protocol/index.ts';
import type { AppEnv } from './auth.ts';
import { ApiError } from './errors.ts';

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'payload_too_large', `The body is over ${maxBytes} bytes. Send a shorter prompt or fewer messages.`);
}

/** `hono/body-limit`: counts bytes as they arrive, so a lying or absent Content-Length cannot make the Worker buffer more. */
export function limitBody(maxBytes = MAX_CREATE_RUN_BYTES): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw tooLarge(maxBytes);
    },
  });
}

/**
 * The request's JSON body (after `requireJsonBody` and `limitBody`), parsed
 * into null-prototype objects: a reserved key or nesting past 64 levels is a
 * `ProtocolError`, which the route answers as `400 invalid_body`.
 */
export async function readJsonBody(c: Context<AppEnv>): Promise<unknown> {
  if (!c.req.raw.body) throw new ApiError(400, 'invalid_json', 'The request has no body; send a JSON object.');
  try {
    return parseRequestJson(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(await c.req.arrayBuffer()));
  } catch (error) {
    if (error instanceof ProtocolError) throw new ApiError(400, 'invalid_body', error.message);
    if (error instanceof ApiError) throw error;
    throw new ApiError(400, 'invalid_json', 'The body is not valid UTF-8 JSON.');
  }
}
