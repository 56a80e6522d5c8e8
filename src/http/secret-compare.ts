/**
 * Comparing a presented secret with the configured one without leaking, by
 * timing, how much of it matched or how long it is: both are HMACed with a
 * random key first, so what is compared are two 32-byte digests that an
 * attacker can neither choose nor predict, and they are compared in constant time.
 */

let isolateKey: Promise<CryptoKey> | undefined;

/** Random per isolate, made on first use: workerd forbids random generation at module scope. */
function key(): Promise<CryptoKey> {
  isolateKey ??= crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']) as Promise<CryptoKey>;
  return isolateKey;
}

/** `workerd` has `crypto.subtle.timingSafeEqual`; elsewhere (Node, in unit tests) it is absent. */
type SubtleWithTimingSafeEqual = SubtleCrypto & { timingSafeEqual?: (a: ArrayBuffer | ArrayBufferView, b: ArrayBuffer | ArrayBufferView) => boolean };

export async function secretsEqual(presented: string, expected: string): Promise<boolean> {
  const k = await key();
  const encoder = new TextEncoder();
  const [a, b] = await Promise.all([
    crypto.subtle.sign('HMAC', k, encoder.encode(presented)),
    crypto.subtle.sign('HMAC', k, encoder.encode(expected)),
  ]);
  const subtle = crypto.subtle as SubtleWithTimingSafeEqual;
  if (typeof subtle.timingSafeEqual === 'function') return subtle.timingSafeEqual(a, b);
  return constantTimeEqual(new Uint8Array(a), new Uint8Array(b));
}

/** Touches every byte whatever the inputs; a length mismatch is not a secret (digests are fixed-size). */
export function constantTimeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  let difference = 0;
  for (let i = 0; i < a.byteLength; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}
