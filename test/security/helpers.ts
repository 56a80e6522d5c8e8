import type { StreamChunk } from '@tanstack/ai';
import { env, runInDurableObject } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { expect } from 'vitest';
import type { RelayEnv } from '../../src/config.ts';
import { runObjectName } from '../../src/http/auth.ts';
import type { RunObject } from '../../src/run/run-object.ts';
import { BASE, tailOf, type Tail } from '../workers/helpers.ts';

export { finished, range, tailOf, text, texts } from '../workers/helpers.ts';

/** The security project's bindings (vitest.config.ts): auth on. */
export const relayEnv = env as unknown as RelayEnv;
export const API_TOKEN = relayEnv.API_TOKEN!;
export const HARNESS_SECRET = relayEnv.ANTHROPIC_API_KEY!;
export const ALLOWED_ORIGIN = 'https://app.example';

export function api(path: string, init?: RequestInit): Promise<Response> {
  return exports.default.fetch(`${BASE}${path}`, init);
}

/** Headers of an API-token request, acting for `tenant` when given. */
export function bearer(tenant?: string): Record<string, string> {
  return { authorization: `Bearer ${API_TOKEN}`, ...(tenant === undefined ? {} : { 'x-tenant': tenant }) };
}

export interface CreatedRun {
  runId: string;
  attachToken: string;
  body: Record<string, unknown>;
}

export async function createRun(options: { tenant?: string; body?: unknown; headers?: Record<string, string> } = {}): Promise<CreatedRun> {
  const res = await api('/runs', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...bearer(options.tenant), ...options.headers },
    body: JSON.stringify(options.body ?? { prompt: 'hello' }),
  });
  const body = (await res.json()) as Record<string, unknown> & { runId: string; attachToken: string };
  if (res.status !== 202 && res.status !== 200) throw new Error(`POST /runs answered ${res.status}: ${JSON.stringify(body)}`);
  return { runId: body.runId, attachToken: body.attachToken, body };
}

export function stubOf(tenant: string | null, runId: string) {
  return env.RUNS.get(env.RUNS.idFromName(runObjectName(tenant, runId)));
}

export function feed(tenant: string | null, runId: string, chunks: StreamChunk[]) {
  return runInDurableObject(stubOf(tenant, runId), (object: RunObject) => object.ingest(chunks));
}

export async function status(tenant: string | null, runId: string): Promise<string | undefined> {
  return runInDurableObject(stubOf(tenant, runId), async (object: RunObject) => (await object.record(runId))?.status);
}

/** Every error: the status and `{error: {code, message}}`. */
export async function expectError(res: Response, statusCode: number, code: string): Promise<{ error: { code: string; message: string } }> {
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect({ status: res.status, code: body.error?.code }).toEqual({ status: statusCode, code });
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.message.length).toBeGreaterThan(10);
  return body;
}

/** Status, every header and the body text: what "byte-identical" compares. */
export async function fingerprint(res: Response): Promise<{ status: number; headers: [string, string][]; body: string }> {
  return { status: res.status, headers: [...res.headers].sort(([a], [b]) => a.localeCompare(b)), body: new TextDecoder().decode(await res.arrayBuffer()) };
}

export async function openTail(path: string, headers: Record<string, string> = {}): Promise<Tail> {
  return tailOf(await api(path, { headers: { upgrade: 'websocket', ...headers } }));
}
