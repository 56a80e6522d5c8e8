import type { StreamChunk } from '@tanstack/ai';
import { env, listDurableObjectIds, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import type { RelayEnv } from '../../src/config.ts';
import { TOO_MANY_RUNS_RETRY_AFTER_SECONDS } from '../../src/http/admission.ts';
import { app } from '../../src/http/app.ts';
import { tenantStub, type TenantObject } from '../../src/tenant/tenant-object.ts';
import { BASE, feed, texts } from './helpers.ts';

/**
 * MAX_ACTIVE_RUNS per tenant, at a small configured value: past it `POST
 * /runs` is `429 too_many_runs` with `Retry-After` and stores nothing, and
 * every way a run ends gives its slot back.
 */

const relayEnv = env as unknown as RelayEnv;
const LIMITED = { ...relayEnv, MAX_ACTIVE_RUNS: '2' } as RelayEnv;
const ctx = { waitUntil: () => {}, passThroughOnException: () => {} } as unknown as ExecutionContext;

function post(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<Response> {
  const request = new Request(`${BASE}/runs`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return Promise.resolve(app.fetch(request, LIMITED, ctx));
}

async function start(body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<string> {
  const res = await post(body, headers);
  expect(res.status).toBe(202);
  return ((await res.json()) as { runId: string }).runId;
}

const active = (tenant: string | null) => tenantStub(relayEnv, tenant).activeRuns();

/** A slot is given back by the run's end, in its own time (after the terminal status is durable). */
async function released(tenant: string | null, runId: string): Promise<void> {
  for (let i = 0; i < 500 && (await active(tenant)).includes(runId); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(await active(tenant)).not.toContain(runId);
}

async function storedObjects(): Promise<number> {
  return (await listDurableObjectIds(relayEnv.RUNS)).length + (await listDurableObjectIds(relayEnv.THREADS)).length;
}

describe('MAX_ACTIVE_RUNS', () => {
  it('answers the run past the limit with 429 too_many_runs and Retry-After, and stores nothing for it', async () => {
    const tenant = 'full-house';
    const headers = { 'x-tenant': tenant };
    const first = await start({ prompt: 'one' }, headers);
    const second = await start({ prompt: 'two' }, headers);
    expect(await active(tenant)).toEqual([first, second]);
    const before = await storedObjects();
    const res = await post({ prompt: 'three', threadId: 'third-thread' }, headers);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe(String(TOO_MANY_RUNS_RETRY_AFTER_SECONDS));
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('too_many_runs');
    expect(body.error.message).toContain('MAX_ACTIVE_RUNS');
    expect(await storedObjects()).toBe(before);
    expect(await active(tenant)).toEqual([first, second]);
    // Another tenant has slots of its own.
    await start({ prompt: 'elsewhere' }, { 'x-tenant': 'next-door' });
  });

  it('gives the slot back when a run is cancelled, completes or fails', async () => {
    const tenant = 'turnover';
    const headers = { 'x-tenant': tenant };
    const cancelled = await start({ prompt: 'a' }, headers);
    const completed = await start({ prompt: 'b' }, headers);
    expect((await post({ prompt: 'c' }, headers)).status).toBe(429);

    const cancel = await app.fetch(new Request(`${BASE}/runs/${cancelled}/cancel`, { method: 'POST', headers }), LIMITED, ctx);
    expect(((await cancel.json()) as { status: string }).status).toBe('aborted');
    await released(tenant, cancelled);

    await runInDurableObject(env.RUNS.get(env.RUNS.idFromName(`${tenant}/${completed}`)), (object: { ingest(c: StreamChunk[]): unknown }) =>
      object.ingest([...texts(0, 2), { type: 'RUN_FINISHED', runId: completed, threadId: completed, finishReason: 'stop' } as unknown as StreamChunk]),
    );
    await released(tenant, completed);

    const failing = await start({ prompt: 'd' }, headers);
    await runInDurableObject(env.RUNS.get(env.RUNS.idFromName(`${tenant}/${failing}`)), (object: { ingest(c: StreamChunk[]): unknown }) =>
      object.ingest([{ type: 'RUN_ERROR', runId: failing, threadId: failing, message: 'boom', code: 'demo_failure' } as unknown as StreamChunk]),
    );
    await released(tenant, failing);
    expect(await active(tenant)).toEqual([]);
  });

  it('takes no slot for a turn its thread refuses, and one slot for concurrent retries of one key', async () => {
    const first = await start({ prompt: 'a', threadId: 'busy-thread' });
    expect((await post({ prompt: 'b', threadId: 'busy-thread' })).status).toBe(409);
    expect(await active(null)).toEqual([first]);

    await feed(first, [{ type: 'RUN_FINISHED', runId: first, threadId: 'busy-thread', finishReason: 'stop' } as unknown as StreamChunk]);
    await released(null, first);
    const key = { 'idempotency-key': `admission-${crypto.randomUUID()}` };
    const answers = await Promise.all([post({ prompt: 'same' }, key), post({ prompt: 'same' }, key), post({ prompt: 'same' }, key)]);
    const ids = new Set<string>();
    for (const res of answers) {
      expect([200, 202, 409]).toContain(res.status);
      if (res.status !== 409) ids.add(((await res.json()) as { runId: string }).runId);
    }
    expect([...ids]).toHaveLength(1);
    expect(await active(null)).toEqual([...ids]);
  });

  it('reclaims a slot whose release never came once its lease runs out', async () => {
    const stub = tenantStub(relayEnv, 'lost-release');
    expect(await stub.admit({ runId: 'run_a', holder: 'h', limit: 1, leaseMs: 60_000 })).toEqual({ kind: 'admitted', active: 1 });
    expect((await stub.admit({ runId: 'run_b', holder: 'h', limit: 1, leaseMs: 60_000 })).kind).toBe('full');
    await runInDurableObject(stub, (_object: TenantObject, state) => state.storage.sql.exec('UPDATE active_runs SET lease_until = 0'));
    expect(await stub.admit({ runId: 'run_b', holder: 'h', limit: 1, leaseMs: 60_000 })).toEqual({ kind: 'admitted', active: 1 });
    // A request that made no run frees only a slot it took itself.
    await stub.release('run_b', 'someone-else');
    expect(await stub.activeRuns()).toEqual(['run_b']);
    await stub.release('run_b', 'h');
    expect(await stub.activeRuns()).toEqual([]);
  });
});
