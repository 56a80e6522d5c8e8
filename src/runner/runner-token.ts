import { attachTokenKey } from '../http/attach-token.ts';

/**
 * The container transport's runner tokens: one per sandbox, so a token seen
 * in one container opens no other. `hex(HMAC-SHA256(key, sandboxId))`, where
 * the key is `RUNNER_SECRET` when set (an operator can recompute a token with
 * `openssl dgst -sha256 -hmac "$RUNNER_SECRET"`), else a key derived from the
 * attach-token key under its own label, so neither key can stand in for the other.
 */

/** What the attach-token key signs to make the runner-token key: the label keeps the two apart. */
const KEY_LABEL = 'harness-relay runner-token v1';

const encoder = new TextEncoder();

export interface RunnerTokenSecrets {
  runnerSecret: string | undefined;
  attachTokenSecret: string | undefined;
  apiToken: string | undefined;
}

let cached: { secrets: string; key: Promise<CryptoKey> } | undefined;

function hmacKey(material: BufferSource): Promise<CryptoKey> {
  return crypto.subtle.importKey('raw', material, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

async function deriveKey(secrets: RunnerTokenSecrets): Promise<CryptoKey> {
  if (secrets.runnerSecret !== undefined) return hmacKey(encoder.encode(secrets.runnerSecret));
  const parent = await attachTokenKey(secrets);
  return hmacKey(await crypto.subtle.sign('HMAC', parent, encoder.encode(KEY_LABEL)));
}

/** Derived once per isolate (per set of secrets). */
export function runnerTokenKey(secrets: RunnerTokenSecrets): Promise<CryptoKey> {
  const id = JSON.stringify([secrets.runnerSecret, secrets.attachTokenSecret, secrets.apiToken]);
  if (cached?.secrets !== id) cached = { secrets: id, key: deriveKey(secrets) };
  return cached.key;
}

/** The token the runner in `sandboxId` is started with, and that every request to it carries. */
export async function sandboxRunnerToken(key: CryptoKey, sandboxId: string): Promise<string> {
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, encoder.encode(sandboxId)));
  return Array.from(mac, (byte) => byte.toString(16).padStart(2, '0')).join('');
}
