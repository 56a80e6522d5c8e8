import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { runIdForKey } from '../../src/http/ids.ts';
import { attachSubprotocols } from '../../src/protocol/index.ts';
import done from '../fixtures/legacy/done.json';
import { ALLOWED_ORIGIN, api, bearer, createRun, expectError, feed, fingerprint, finished, openTail, status, stubOf, texts } from './helpers.ts';

type Credentials = Record<string, string>;

/** The routes a run answers on, each as one request with the given credential headers. */
function routes(runId: string, creds: Credentials, query = ''): Record<string, () => Promise<Response>> {
  const headers = { origin: ALLOWED_ORIGIN, ...creds };
  return {
    record: () => api(`/runs/${runId}${query}`, { headers }),
    ndjson: () => api(`/runs/${runId}/events${query}`, { headers }),
    sse: () => api(`/runs/${runId}/events${query}`, { headers: { ...headers, accept: 'text/event-stream' } }),
    ws: () => api(`/runs/${runId}/ws${query}`, { headers: { ...headers, upgrade: 'websocket' } }),
    cancel: () => api(`/runs/${runId}/cancel${query}`, { method: 'POST', headers }),
    attachToken: () => api(`/runs/${runId}/attach-token${query}`, { method: 'POST', headers }),
  };
}

const READS = ['record', 'ndjson', 'sse', 'ws'] as const;

let counter = 0;
const fresh = (label: string) => `${label}-${++counter}-${crypto.randomUUID()}`;

describe('tenant scope', () => {
  it('names a tenant’s run object "<tenant>/<runId>" and a tenant-less one by the bare run id (legacy runs keep working)', async () => {
    const scoped = await createRun({ tenant: 'acme' });
    const bare = await createRun();
    const recordIn = (tenant: string | null, runId: string) => runInDurableObject(stubOf(tenant, runId), (_o, state) => state.storage.sql.exec('SELECT run_id FROM run').toArray());
    expect(await recordIn('acme', scoped.runId)).toEqual([{ run_id: scoped.runId }]);
    expect(await status(null, scoped.runId)).toBeUndefined();
    expect(await recordIn(null, bare.runId)).toEqual([{ run_id: bare.runId }]);
  });

  it('serves a legacy rec:<runId> record from the object named by the bare run id', async () => {
    const runId = `run_${crypto.randomUUID().replace(/-/g, '')}`;
    await runInDurableObject(stubOf(null, runId), (_o, state) => {
      // Ended a minute ago: a legacy run older than RUN_TTL_SECONDS expires at once instead.
      const recent = (value: unknown) => ({ ...(value as object), createdAt: Date.now() - 61_000, updatedAt: Date.now() - 60_000 });
      for (const [key, value] of Object.entries(done.kv)) state.storage.kv.put(key.replace(done.runId, runId), key.startsWith('rec:') ? recent(value) : value);
    });
    const res = await api(`/runs/${runId}`, { headers: bearer() });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ runId, status: 'completed' });
    await expectError(await api(`/runs/${runId}`, { headers: bearer('acme') }), 404, 'run_not_found');
  });

  it.each(['', 'a/b', 'a b', 'a.b', 'x'.repeat(65)])('refuses X-Tenant %j with 400', async (tenant) => {
    await expectError(await api('/runs', { method: 'POST', headers: { ...bearer(), 'x-tenant': tenant, 'content-type': 'application/json' }, body: '{"prompt":"hi"}' }), 400, 'bad_request');
  });

  it('lets a tenant read, tail and cancel its own run', async () => {
    const { runId, attachToken } = await createRun({ tenant: 'acme' });
    expect((await api(`/runs/${runId}`, { headers: bearer('acme') })).status).toBe(200);
    const tail = await openTail(`/runs/${runId}/ws?token=${attachToken}`);
    await feed('acme', runId, texts(0, 2));
    await tail.until(() => tail.seqs().length === 2);
    const cancel = await api(`/runs/${runId}/cancel`, { method: 'POST', headers: bearer('acme') });
    expect(await cancel.json()).toMatchObject({ status: 'aborted' });
    expect((await tail.closed).code).toBe(1000);
  });

  it('gives two tenants using the same Idempotency-Key two different runs', async () => {
    const key = fresh('shared');
    const a = await createRun({ tenant: 'acme', headers: { 'idempotency-key': key } });
    const b = await createRun({ tenant: 'globex', headers: { 'idempotency-key': key } });
    const none = await createRun({ headers: { 'idempotency-key': key } });
    expect(new Set([a.runId, b.runId, none.runId]).size).toBe(3);
    expect(none.runId).toBe(await runIdForKey(key));
  });

  it('answers a run outside the caller’s scope byte for byte like an unknown run, on every route, never 403', async () => {
    // The run id is known before the run exists (an Idempotency-Key decides it),
    // so "unknown" is measured on the very same id before the run is created.
    const key = fresh('scope');
    const runId = await runIdForKey(key, 'acme');
    const other = await createRun({ tenant: 'globex' });
    const unknown: Record<string, unknown> = {};
    for (const [name, send] of Object.entries(routes(runId, bearer('globex')))) unknown[name] = await fingerprint(await send());
    for (const value of Object.values(unknown)) expect(value).toMatchObject({ status: 404 });

    const created = await createRun({ tenant: 'acme', headers: { 'idempotency-key': key } });
    expect(created.runId).toBe(runId);
    expect((await api(`/runs/${runId}`, { headers: bearer('acme') })).status).toBe(200);

    const misses: Array<[string, Record<string, () => Promise<Response>>, readonly string[]]> = [
      ['API token, another tenant', routes(runId, bearer('globex')), Object.keys(unknown)],
      ['API token, no tenant', routes(runId, bearer()), Object.keys(unknown)],
      ['another run’s attach token (?token=)', routes(runId, {}, `?token=${other.attachToken}`), READS],
      ['another run’s attach token (subprotocol)', routes(runId, { 'sec-websocket-protocol': attachSubprotocols(other.attachToken).join(', ') }), READS],
      ['its own token under a contradicting X-Tenant', routes(runId, { 'x-tenant': 'globex' }, `?token=${created.attachToken}`), READS],
    ];
    for (const [label, sends, names] of misses) {
      for (const name of names) {
        expect({ label, name, ...(await fingerprint(await sends[name]!())) }).toEqual({ label, name, ...(unknown[name] as object) });
      }
    }
    expect(await status('acme', runId)).toBe('running');
  });

  it('refuses another tenant’s cancel as unknown and leaves the run running', async () => {
    const { runId } = await createRun({ tenant: 'acme' });
    await expectError(await api(`/runs/${runId}/cancel`, { method: 'POST', headers: bearer('globex') }), 404, 'run_not_found');
    await expectError(await api(`/runs/${runId}/cancel`, { method: 'POST', headers: bearer() }), 404, 'run_not_found');
    expect(await status('acme', runId)).toBe('running');
  });

  it('carries the tenant in the attach token, so a browser needs no X-Tenant', async () => {
    const { runId, attachToken } = await createRun({ tenant: 'acme' });
    await feed('acme', runId, [finished(runId)]);
    const res = await api(`/runs/${runId}?token=${attachToken}`);
    expect(res.status).toBe(200);
    const same = await api(`/runs/${runId}?token=${attachToken}`, { headers: { 'x-tenant': 'acme' } });
    expect(same.status).toBe(200);
  });
});
