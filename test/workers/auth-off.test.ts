import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { readConfig, type RelayEnv } from '../../src/config.ts';
import { attachTokenKey, signAttachToken } from '../../src/http/attach-token.ts';
import { parseAttachment } from '../../src/run/tails.ts';
import { api, createRun, openTail, runStub } from './helpers.ts';

/**
 * This project runs with API_TOKEN unset (local development): everything is
 * open, but attach tokens are still issued, and a presented one is still
 * checked, so a browser app behaves here as it will in production.
 */
describe('auth off', () => {
  it('issues an attach token with every run', async () => {
    const { json } = await createRun();
    expect(json.attachToken).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    expect((await api(`/runs/${json.runId}?token=${String(json.attachToken)}`)).status).toBe(200);
  });

  it('needs no credential, and ignores an Authorization header', async () => {
    const { json } = await createRun();
    expect((await api(`/runs/${json.runId}`)).status).toBe(200);
    expect((await api(`/runs/${json.runId}`, { headers: { authorization: 'Bearer anything' } })).status).toBe(200);
  });

  it('still refuses a forged or expired token (401)', async () => {
    const { json } = await createRun();
    const key = await attachTokenKey(readConfig(env as unknown as RelayEnv));
    const expired = await signAttachToken(key, { v: 1, run: json.runId, tenant: null, exp: Math.floor(Date.now() / 1000) - 60 });
    for (const token of [`${String(json.attachToken)}x`, expired]) {
      const res = await api(`/runs/${json.runId}?token=${token}`);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toContain('invalid_token');
    }
  });

  it('gives a tail opened with an attach token no right to cancel, and one opened without any the right to', async () => {
    const { json } = await createRun();
    await openTail(json.runId, `?token=${String(json.attachToken)}`);
    await openTail(json.runId);
    const rights = await runInDurableObject(runStub(json.runId), (_object, state) => state.getWebSockets().map((ws) => parseAttachment(ws.deserializeAttachment())?.canCancel));
    expect(rights.sort()).toEqual([false, true]);
  });
});
