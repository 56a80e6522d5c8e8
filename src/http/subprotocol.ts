import { BEARER_SUBPROTOCOL_PREFIX, RELAY_SUBPROTOCOL } from '../protocol/index.ts';

/**
 * Where a browser can put an attach token: a WebSocket upgrade cannot carry
 * an Authorization header, and an EventSource cannot carry any header, so the
 * token rides in `Sec-WebSocket-Protocol` (`bearer.<token>`) or in `?token=`.
 */

/** The subprotocols a client offered, in its order. */
export function offeredSubprotocols(request: Request): string[] {
  const header = request.headers.get('sec-websocket-protocol');
  if (header === null) return [];
  return header.split(',').map((protocol) => protocol.trim()).filter((protocol) => protocol !== '');
}

/** The attach token a request presents, or `null`. The subprotocol wins over the query string. */
export function presentedAttachToken(request: Request): string | null {
  const offered = offeredSubprotocols(request).find((protocol) => protocol.startsWith(BEARER_SUBPROTOCOL_PREFIX));
  if (offered !== undefined) return offered.slice(BEARER_SUBPROTOCOL_PREFIX.length);
  return new URL(request.url).searchParams.get('token');
}

/**
 * The run object's 101, with `harness-relay` echoed when the client offered
 * it: a client that offers subprotocols fails the handshake unless the server
 * picks one of them (RFC 6455 §4.1; browsers and `ws` enforce it). The
 * `bearer.` entry is never echoed, so the token does not travel back.
 */
export function withSubprotocol(response: Response, request: Request): Response {
  if (response.status !== 101 || !offeredSubprotocols(request).includes(RELAY_SUBPROTOCOL)) return response;
  const headers = new Headers(response.headers);
  headers.set('sec-websocket-protocol', RELAY_SUBPROTOCOL);
  return new Response(null, { status: 101, headers, webSocket: response.webSocket });
}
