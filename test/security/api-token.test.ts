import { env, listDurableObjectIds } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { constantTimeEqual, secretsEqual } from '../../src/http/secret-compare.ts';
import { api, API_TOKEN, bearer, createRun, expectError } from './helpers.ts';

interface Route {
  name: string;
  request: (runId: string) => [string, RequestInit];
  /** The status with the right API token. */
  ok: number;
}

const json = { 'content-type': 'application/json' };

/** Every route under /runs, with what it answers when the token is right. */
const ROUTES: Route[] = [
  { name: 'POST /runs', request: () => ['/runs', { method: 'POST', headers: json, body: '{"prompt":"hi"}' }], ok: 202 },
  { name: 'GET /runs/:runId', request: (id) => [`/runs/${id}`, {}], ok: 200 },
  { name: 'GET /runs/:runId/events', request: (id) => [`/runs/${id}/events`, {}], ok: 200 },
  { name: 'GET /runs/:runId/ws', request: (id) => [`/runs/${id}/ws`, { headers: { upgrade: 'websocket' } }], ok: 101 },
  { name: 'POST /runs/:runId/attach-token', request: (id) => [`/runs/${id}/attach-token`, { method: 'POST' }], ok: 200 },
  { name: 'POST /runs/:runId/cancel', request: (id) => [`/runs/${id}/cancel`, { method: 'POST' }], ok: 200 },
];

function send(route: Route, runId: string, headers: Record<string, string>): Promise<Response> {
  const [path, init] = route.request(runId);
  return api(path, { ...init, headers: { ...(init.headers as Record<string, string>), ...headers } });
}

async function expectUnauthorized(res: Response, invalidToken: boolean): Promise<void> {
  expect(res.webSocket).toBeNull();
  expect(res.headers.get('www-authenticate')).toBe(invalidToken ? 'Bearer realm="harness-relay", error="invalid_token"' : 'Bearer realm="harness-relay"');
  await expectError(res, 401, 'unauthorized');
}

describe('the API token', () => {
  it.each(ROUTES)('is required on $name: 401 unauthorized with WWW-Authenticate when missing', async (route) => {
    const { runId } = await createRun();
    await expectUnauthorized(await send(route, runId, {}), false);
  });

  it.each(ROUTES)('is checked on $name: 401 invalid_token when wrong', async (route) => {
    const { runId } = await createRun();
    for (const authorization of [`Bearer ${API_TOKEN}x`, `Bearer ${API_TOKEN.slice(0, -1)}`, 'Bearer ', `Basic ${btoa(`user:${API_TOKEN}`)}`, API_TOKEN]) {
      await expectUnauthorized(await send(route, runId, { authorization }), true);
    }
  });

  it.each(ROUTES)('opens $name when right', async (route) => {
    const { runId } = await createRun();
    const res = await send(route, runId, bearer());
    expect(res.status).toBe(route.ok);
    if (res.webSocket) res.webSocket.accept();
    else await res.body?.cancel();
  });

  it('accepts the scheme in any case, as RFC 7235 says', async () => {
    const res = await api('/runs', { method: 'POST', headers: { ...json, authorization: `bearer ${API_TOKEN}` }, body: '{"prompt":"hi"}' });
    expect(res.status).toBe(202);
  });

  it('guards unknown routes under /runs and /threads too, before they can say 404', async () => {
    for (const path of ['/runs/nope/elsewhere', '/runs/', '/threads', '/threads/t1', '/threads/t1/messages']) {
      await expectUnauthorized(await api(path), false);
    }
  });

  it('lets a refused POST /runs persist nothing', async () => {
    const before = (await listDurableObjectIds(env.RUNS)).length;
    const res = await api('/runs', { method: 'POST', headers: { ...json, authorization: 'Bearer wrong' }, body: '{"prompt":"hi"}' });
    await expectUnauthorized(res, true);
    expect((await listDurableObjectIds(env.RUNS)).length).toBe(before);
  });

  it('is not needed for /health, which says auth is on', async () => {
    const res = await api('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, auth: 'on' });
  });
});

describe('the token comparison', () => {
  it('is true for equal secrets only', async () => {
    expect(await secretsEqual(API_TOKEN, API_TOKEN)).toBe(true);
    expect(await secretsEqual('', '')).toBe(true);
    expect(await secretsEqual(`${API_TOKEN}`, API_TOKEN.slice(0))).toBe(true);
    expect(await secretsEqual(API_TOKEN.replace(/.$/, 'X'), API_TOKEN)).toBe(false);
    expect(await secretsEqual(API_TOKEN.toUpperCase(), API_TOKEN)).toBe(false);
  });

  it('is false for different lengths, a prefix, an extension or an empty string', async () => {
    expect(await secretsEqual(API_TOKEN.slice(0, 8), API_TOKEN)).toBe(false);
    expect(await secretsEqual(`${API_TOKEN}${API_TOKEN}`, API_TOKEN)).toBe(false);
    expect(await secretsEqual('', API_TOKEN)).toBe(false);
    expect(await secretsEqual(API_TOKEN, '')).toBe(false);
  });

  it('uses workerd’s crypto.subtle.timingSafeEqual here', () => {
    expect(typeof (crypto.subtle as SubtleCrypto & { timingSafeEqual?: unknown }).timingSafeEqual).toBe('function');
  });

  it('has a constant-time fallback that agrees (for runtimes without timingSafeEqual)', () => {
    const bytes = (...values: number[]) => new Uint8Array(values);
    expect(constantTimeEqual(bytes(1, 2, 3), bytes(1, 2, 3))).toBe(true);
    expect(constantTimeEqual(bytes(), bytes())).toBe(true);
    expect(constantTimeEqual(bytes(1, 2, 3), bytes(1, 2, 4))).toBe(false);
    expect(constantTimeEqual(bytes(0, 2, 3), bytes(1, 2, 3))).toBe(false);
    expect(constantTimeEqual(bytes(1, 2), bytes(1, 2, 3))).toBe(false);
    expect(constantTimeEqual(bytes(1, 2, 3), bytes(1, 2))).toBe(false);
  });
});
