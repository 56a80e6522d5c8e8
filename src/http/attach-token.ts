import { parseAttachTokenPayload, type AttachTokenPayload } from '../protocol/index.ts';

/**
 * Attach tokens: `base64url(JSON payload) + '.' + base64url(HMAC-SHA256 of
 * the first part)`. Stateless, so any isolate can check one without a
 * lookup; bound to one run and tenant and short-lived, because a browser
 * puts it where logs and history may see it (a URL, a subprotocol header).
 */

/** HKDF `info`: the key signs attach tokens and nothing else, even when derived from API_TOKEN. */
const KEY_LABEL = 'harness-relay attach-token v1';

/**
 * With auth off there is no secret to derive from. Everything is open then,
 * so a token grants nothing a bare request doesn't: a public key is enough
 * to keep tokens checkable (and dev shaped like production).
 */
const AUTH_OFF_KEY_MATERIAL = 'harness-relay: auth is off, attach tokens protect nothing';

/** A token is ~150 characters; a longer one is refused before any crypto. */
const MAX_TOKEN_CHARS = 1024;

const encoder = new TextEncoder();

export type AttachTokenCheck = { ok: true; payload: AttachTokenPayload } | { ok: false; reason: 'invalid' | 'expired' };

let cached: { material: string; key: Promise<CryptoKey> } | undefined;

/** The signing key: from ATTACH_TOKEN_SECRET, else API_TOKEN, else the auth-off key. Derived once per isolate. */
export function attachTokenKey(config: { attachTokenSecret: string | undefined; apiToken: string | undefined }): Promise<CryptoKey> {
  const material = config.attachTokenSecret ?? config.apiToken ?? AUTH_OFF_KEY_MATERIAL;
  if (cached?.material !== material) cached = { material, key: deriveKey(material) };
  return cached.key;
}

async function deriveKey(material: string): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey('raw', encoder.encode(material), 'HKDF', false, ['deriveKey']);
  return crypto.subtle.deriveKey(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: encoder.encode(KEY_LABEL) },
    base,
    { name: 'HMAC', hash: 'SHA-256', length: 256 },
    false,
    ['sign', 'verify'],
  );
}

/** Mints a token for `run` in `tenant`; `expiresAt` is epoch ms (the payload holds seconds). */
export async function mintAttachToken(
  key: CryptoKey,
  grant: { run: string; tenant: string | null; respond?: boolean },
  nowMs: number,
  ttlMs: number,
): Promise<{ attachToken: string; expiresAt: number }> {
  const exp = Math.floor((nowMs + ttlMs) / 1000);
  const payload: AttachTokenPayload = { v: 1, run: grant.run, tenant: grant.tenant, exp, ...(grant.respond === true ? { respond: true as const } : {}) };
  return { attachToken: await signAttachToken(key, payload), expiresAt: exp * 1000 };
}

/** Signs any payload as is; `mintAttachToken` is the API. Exported so tests can mint expired tokens. */
export async function signAttachToken(key: CryptoKey, payload: AttachTokenPayload): Promise<string> {
  const body = base64url(encoder.encode(JSON.stringify(payload)));
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(body));
  return `${body}.${base64url(new Uint8Array(mac))}`;
}

/** The MAC is checked before the payload is parsed: nothing unsigned is ever interpreted. */
export async function verifyAttachToken(key: CryptoKey, token: string, nowMs: number): Promise<AttachTokenCheck> {
  const invalid: AttachTokenCheck = { ok: false, reason: 'invalid' };
  if (token.length > MAX_TOKEN_CHARS) return invalid;
  const parts = token.split('.');
  if (parts.length !== 2) return invalid;
  const [body, macText] = parts as [string, string];
  const json = fromBase64url(body);
  const mac = fromBase64url(macText);
  if (!json || !mac) return invalid;
  // subtle.verify compares in constant time, unlike comparing two signatures by hand.
  if (!(await crypto.subtle.verify('HMAC', key, mac, encoder.encode(body)).catch(() => false))) return invalid;
  let payload: AttachTokenPayload;
  try {
    payload = parseAttachTokenPayload(JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(json)));
  } catch {
    return invalid;
  }
  return payload.exp * 1000 <= nowMs ? { ok: false, reason: 'expired' } : { ok: true, payload };
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64url(text: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[A-Za-z0-9_-]+$/.test(text)) return null;
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}
