import { env, runInDurableObject } from 'cloudflare:test';
import { getSandbox } from '@cloudflare/sandbox';
import type { RunView } from '../../src/protocol/index.ts';
import type { Sandbox } from '../../src/runner/sandbox-object.ts';
import { api, runStub } from '../workers/helpers.ts';

export { api, createRun } from '../workers/helpers.ts';

interface SandboxEnv {
  Sandbox: DurableObjectNamespace<Sandbox>;
  CONTAINER_HOST_URL: string;
}

export const sandboxEnv = env as unknown as SandboxEnv;

/** Polls the record until the run is terminal; generous, since a cold container starts two Node programs. */
export async function settled(runId: string, bound = 45_000): Promise<RunView> {
  const deadline = Date.now() + bound;
  while (Date.now() < deadline) {
    const current = (await (await api(`/runs/${runId}`)).json()) as RunView;
    if (current.status !== 'running') return current;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`run ${runId} did not settle within ${bound} ms`);
}

/** Polls until `check` holds (or throws with `what`). Not a timing assertion: the bound only keeps a broken run from hanging. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | null | false>, bound = 30_000): Promise<T> {
  const deadline = Date.now() + bound;
  while (Date.now() < deadline) {
    const value = await check();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`never: ${what}`);
}

/** The sandbox the run object chose for its run (stored with the run). */
export async function sandboxIdOf(runId: string): Promise<string> {
  return runInDurableObject(runStub(runId), (_object, state) => {
    const row = state.storage.sql.exec<{ sandbox_id: string | null }>('SELECT sandbox_id FROM run').toArray()[0];
    if (!row?.sandbox_id) throw new Error(`run ${runId} has no sandbox id`);
    return row.sandbox_id;
  });
}

export function sandboxOf(sandboxId: string) {
  return getSandbox(sandboxEnv.Sandbox, sandboxId);
}

export interface HostInstance {
  instance: string;
  key: string;
  ports: Record<string, number>;
  pid: number;
}

export interface HostProcess {
  pid: number;
  ppid: number;
  pgid: number;
  cmdline: string;
}

export async function host<T>(path: string, init?: RequestInit): Promise<T> {
  const response = await fetch(`${sandboxEnv.CONTAINER_HOST_URL}${path}`, init);
  return (await response.json()) as T;
}

/** The live containers of one sandbox (the host keys them by the Sandbox object's id). */
export function containersOf(sandboxId: string): Promise<HostInstance[]> {
  return host<HostInstance[]>(`/instances?key=${sandboxEnv.Sandbox.idFromName(sandboxId).toString()}`);
}

export function processesOf(instance: string): Promise<HostProcess[]> {
  return host<HostProcess[]>(`/instances/${instance}/processes`);
}

/** The platform's admission: `maxInstances` live containers at most, or every start rate-limited. */
export function setPlatform(settings: { maxInstances?: number; refuse?: 'rate_limited' }): Promise<unknown> {
  return host('/platform', { method: 'PUT', body: JSON.stringify(settings) });
}

/** A finished run's NDJSON tail, as text (decoded by hand: workerd warns on .text() of a non-text type). */
export async function eventsText(runId: string): Promise<string> {
  return new TextDecoder().decode(await (await api(`/runs/${runId}/events`)).arrayBuffer());
}

/** Every event line of a finished run, through the NDJSON tail. */
export async function seqsOf(runId: string): Promise<number[]> {
  const text = await eventsText(runId);
  const seqs: number[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const frame = JSON.parse(line) as { seq?: number };
    if (typeof frame.seq === 'number') seqs.push(frame.seq);
  }
  return seqs;
}
