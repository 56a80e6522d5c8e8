import { describe, expect, it } from 'vitest';
import { attachTokenKey, mintAttachToken, signAttachToken, verifyAttachToken } from '../../src/http/attach-token.ts';
import { secretsEqual } from '../../src/http/secret-compare.ts';
import { parseAttachTokenPayload, ProtocolError } from '../../src/protocol/index.ts';

const RUN = `run_${'ab'.repeat(16)}`;
const HOUR_MS = 3_600_000;

describe('secretsEqual without crypto.subtle.timingSafeEqual (Node)', () => {
  it('falls back to the constant-time loop and still compares exactly', async () => {
    expect((crypto.subtle as SubtleCrypto & { timingSafeEqual?: unknown }).timingSafeEqual).toBeUndefined();
    expect(await secretsEqual('s3cret-token', 's3cret-token')).toBe(true);
    expect(await secretsEqual('s3cret-tokeN', 's3cret-token')).toBe(false);
    expect(await secretsEqual('s3cret', 's3cret-token')).toBe(false);
    expect(await secretsEqual('s3cret-token-and-more', 's3cret-token')).toBe(false);
  });
});

describe('attach tokens', () => {
  it('round-trip the run and tenant until exp, then report expired', async () => {
    const key = await attachTokenKey({ attachTokenSecret: undefined, apiToken: 'api-token' });
    const now = 1_800_000_000_000;
    const { attachToken, expiresAt } = await mintAttachToken(key, { run: RUN, tenant: 'acme' }, now, HOUR_MS);
    expect(expiresAt).toBe(now + HOUR_MS);
    expect(await verifyAttachToken(key, attachToken, now)).toEqual({ ok: true, payload: { v: 1, run: RUN, tenant: 'acme', exp: (now + HOUR_MS) / 1000 } });
    expect(await verifyAttachToken(key, attachToken, expiresAt - 1)).toMatchObject({ ok: true });
    expect(await verifyAttachToken(key, attachToken, expiresAt)).toEqual({ ok: false, reason: 'expired' });
  });

  it('are keyed by ATTACH_TOKEN_SECRET over API_TOKEN, and neither key accepts the other’s tokens', async () => {
    const fromApi = await attachTokenKey({ attachTokenSecret: undefined, apiToken: 'api-token' });
    const fromSecret = await attachTokenKey({ attachTokenSecret: 'attach-secret', apiToken: 'api-token' });
    const authOff = await attachTokenKey({ attachTokenSecret: undefined, apiToken: undefined });
    const keys = [fromApi, fromSecret, authOff];
    for (const [i, signer] of keys.entries()) {
      const { attachToken } = await mintAttachToken(signer, { run: RUN, tenant: null }, Date.now(), HOUR_MS);
      for (const [j, verifier] of keys.entries()) {
        expect((await verifyAttachToken(verifier, attachToken, Date.now())).ok, `${i} verified by ${j}`).toBe(i === j);
      }
    }
  });

  it('check the MAC before reading the payload: a signed but malformed payload is invalid, not a crash', async () => {
    const key = await attachTokenKey({ attachTokenSecret: 'k', apiToken: undefined });
    const bad = await signAttachToken(key, { v: 2, run: RUN, tenant: null, exp: 9_999_999_999 } as unknown as Parameters<typeof signAttachToken>[1]);
    expect(await verifyAttachToken(key, bad, Date.now())).toEqual({ ok: false, reason: 'invalid' });
  });

  it('parse a payload field by field', () => {
    expect(parseAttachTokenPayload({ v: 1, run: RUN, tenant: null, exp: 1 })).toEqual({ v: 1, run: RUN, tenant: null, exp: 1 });
    for (const bad of [null, [], { v: 1, run: 'x', tenant: null, exp: 1 }, { v: 1, run: RUN, tenant: 'a/b', exp: 1 }, { v: 1, run: RUN, tenant: null, exp: 1.5 }, { v: 1, run: RUN, exp: 1 }]) {
      expect(() => parseAttachTokenPayload(bad)).toThrow(ProtocolError);
    }
  });
});
