import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import { ALLOWED_ORIGIN, api, bearer, createRun, expectError, relayEnv } from './helpers.ts';
import { BASE } from '../workers/helpers.ts';

/** Near misses of https://app.example: scheme, port, suffix, prefix, case, path, the `null` origin. */
const FOREIGN = ['http://app.example', 'https://app.example:8443', 'https://app.example.evil', 'https://evil-app.example', 'https://sub.app.example', 'https://APP.example', 'https://app.example/', 'null'];

function preflight(path: string, origin: string, method = 'POST'): Promise<Response> {
  return api(path, {
    method: 'OPTIONS',
    headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization, content-type, x-tenant' },
  });
}

function expectNoCorsGrant(res: Response): void {
  for (const name of ['access-control-allow-origin', 'access-control-allow-methods', 'access-control-allow-headers', 'access-control-allow-credentials', 'access-control-expose-headers']) {
    expect(res.headers.get(name), name).toBeNull();
  }
}

describe('CORS', () => {
  it('answers a preflight from an allowed origin with 204 and the methods and headers, before any credential', async () => {
    for (const path of ['/runs', '/runs/run_00000000000000000000000000000000/cancel', '/runs/run_00000000000000000000000000000000/events']) {
      const res = await preflight(path, ALLOWED_ORIGIN);
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
      expect(res.headers.get('access-control-allow-methods')).toBe('GET, POST');
      const allowed = res.headers.get('access-control-allow-headers')!.split(',').map((h) => h.trim().toLowerCase());
      expect(allowed.sort()).toEqual(['authorization', 'content-type', 'idempotency-key', 'last-event-id', 'x-tenant']);
      expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(await res.text()).toBe('');
    }
  });

  it.each(FOREIGN)('answers a preflight from %s without any CORS header', async (origin) => {
    const res = await preflight('/runs', origin);
    expect(res.status).toBe(204);
    expectNoCorsGrant(res);
    expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
  });

  it('lets an allowed page read answers, errors included, with Vary: Origin and never Allow-Credentials', async () => {
    const { runId } = await createRun();
    const answers = [
      await api(`/runs/${runId}`, { headers: { ...bearer(), origin: ALLOWED_ORIGIN } }),
      await api(`/runs/${runId}/events`, { headers: { ...bearer(), origin: ALLOWED_ORIGIN } }),
      await api(`/runs/${runId}`, { headers: { origin: ALLOWED_ORIGIN } }),
      await api('/health', { headers: { origin: ALLOWED_ORIGIN } }),
    ];
    expect(answers.map((res) => res.status)).toEqual([200, 200, 401, 200]);
    for (const res of answers) {
      expect(res.headers.get('access-control-allow-origin')).toBe(ALLOWED_ORIGIN);
      expect(res.headers.get('access-control-expose-headers')).toBe('Location, WWW-Authenticate');
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
      expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
      await res.body?.cancel();
    }
  });

  it('grants a foreign page nothing on a real request', async () => {
    for (const origin of FOREIGN) {
      const res = await api('/health', { headers: { origin } });
      expect(res.status).toBe(200);
      expectNoCorsGrant(res);
      expect(res.headers.get('vary')).toMatch(/\bOrigin\b/);
    }
  });
});

describe('WebSocket origins', () => {
  it.each(FOREIGN)('refuses an upgrade from %s with 403 forbidden_origin, even with the API token', async (origin) => {
    const { runId, attachToken } = await createRun();
    const withToken = await api(`/runs/${runId}/ws`, { headers: { ...bearer(), upgrade: 'websocket', origin } });
    expect(withToken.webSocket).toBeNull();
    await expectError(withToken, 403, 'forbidden_origin');
    await expectError(await api(`/runs/${runId}/ws?token=${attachToken}`, { headers: { upgrade: 'websocket', origin } }), 403, 'forbidden_origin');
  });

  it('opens an upgrade from an allowed origin, the relay’s own origin, or no origin (not a browser)', async () => {
    const { runId, attachToken } = await createRun();
    for (const origin of [ALLOWED_ORIGIN, new URL(BASE).origin, undefined]) {
      const res = await api(`/runs/${runId}/ws?token=${attachToken}`, { headers: { upgrade: 'websocket', ...(origin ? { origin } : {}) } });
      expect(res.status).toBe(101);
      res.webSocket!.accept();
      res.webSocket!.close(1000, 'done');
    }
  });
});

describe('ALLOWED_ORIGINS', () => {
  it('takes exact origins, comma-separated', () => {
    expect(readConfig(relayEnv).allowedOrigins).toEqual([ALLOWED_ORIGIN]);
    expect(readConfig({ ...relayEnv, ALLOWED_ORIGINS: ' https://a.example , http://localhost:5173,' }).allowedOrigins).toEqual(['https://a.example', 'http://localhost:5173']);
    expect(readConfig({ ...relayEnv, ALLOWED_ORIGINS: undefined }).allowedOrigins).toEqual([]);
  });

  it.each(['*', 'https://*.example.com', '*.example.com', 'https://app.example/', 'https://app.example/path', 'app.example', 'https://APP.example'])('fails loudly on %j', (origin) => {
    expect(() => readConfig({ ...relayEnv, ALLOWED_ORIGINS: origin })).toThrow(/exact origins/);
  });
});
