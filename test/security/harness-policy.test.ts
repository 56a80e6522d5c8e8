import { env, listDurableObjectIds } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { app } from '../../src/http/app.ts';
import { api, bearer, expectError, relayEnv } from './helpers.ts';
import { BASE } from '../workers/helpers.ts';

/**
 * Dangerous harness modes are the operator's choice, never a caller's: what
 * the runner is asked for, as the recording runner double saw it. Its
 * `/health` is the real runner's answer for a machine with a `claude` CLI and
 * an Anthropic key, so claude-code passes the preflight.
 */

interface RecordedRun {
  harness: string;
  threadId: string;
  harnessOptions?: Record<string, unknown>;
}

async function runnerRequests(threadId: string): Promise<RecordedRun[]> {
  const { recorded } = (await (await fetch('http://quiet-runner.test/control/recorded')).json()) as { recorded: string[] };
  return recorded
    .filter((request) => request.startsWith('POST ') && request.includes('/run\n'))
    .map((request) => JSON.parse(request.slice(request.indexOf('\n\n') + 2)) as RecordedRun)
    .filter((run) => run.threadId === threadId);
}

function post(body: unknown, vars: Record<string, string> = {}): Promise<Response> {
  const init = { method: 'POST', headers: { 'content-type': 'application/json', ...bearer() }, body: JSON.stringify(body) };
  if (Object.keys(vars).length === 0) return api('/runs', init);
  // The same bindings with the operator's variables changed: a fresh env object is a fresh configuration.
  return Promise.resolve(app.fetch(new Request(`${BASE}/runs`, init), { ...relayEnv, ...vars }, { waitUntil: () => {}, passThroughOnException: () => {} } as unknown as ExecutionContext));
}

async function objectCount(): Promise<number> {
  return (await listDurableObjectIds(env.RUNS)).length + (await listDurableObjectIds(env.THREADS)).length;
}

describe('harness modes', () => {
  it('asks the runner for an explicit acceptEdits when the caller asks for nothing', async () => {
    const res = await post({ prompt: 'hi', harness: 'claude-code', threadId: 'policy-default' });
    expect(res.status).toBe(202);
    const [run] = await runnerRequests('policy-default');
    expect(run?.harnessOptions).toEqual({ permissionMode: 'acceptEdits' });
  });

  it("keeps the caller's safe choice over the default", async () => {
    expect((await post({ prompt: 'hi', harness: 'claude-code', threadId: 'policy-plan', harnessOptions: { permissionMode: 'plan', maxTurns: 2 } })).status).toBe(202);
    expect((await runnerRequests('policy-plan'))[0]?.harnessOptions).toEqual({ permissionMode: 'plan', maxTurns: 2 });
  });

  it.each([
    { harness: 'claude-code', harnessOptions: { permissionMode: 'bypassPermissions' } },
    { harness: 'codex', harnessOptions: { sandboxMode: 'danger-full-access' } },
  ])('refuses $harnessOptions with 400 option_not_allowed and stores nothing', async ({ harness, harnessOptions }) => {
    const before = await objectCount();
    const { error } = await expectError(await post({ prompt: 'hi', harness, harnessOptions }), 400, 'option_not_allowed');
    expect(error.message).toContain('ALLOW_UNSAFE_HARNESS_OPTIONS');
    expect(await objectCount()).toBe(before);
  });

  it('lets a caller ask for bypassPermissions once the operator sets ALLOW_UNSAFE_HARNESS_OPTIONS=true', async () => {
    const res = await post({ prompt: 'hi', harness: 'claude-code', threadId: 'policy-unsafe', harnessOptions: { permissionMode: 'bypassPermissions' } }, { ALLOW_UNSAFE_HARNESS_OPTIONS: 'true' });
    expect(res.status).toBe(202);
    expect((await runnerRequests('policy-unsafe'))[0]?.harnessOptions).toEqual({ permissionMode: 'bypassPermissions' });
  });

  it("applies the operator's DEFAULT_HARNESS_OPTIONS, an unsafe default included, under the caller's options", async () => {
    const vars = { DEFAULT_HARNESS_OPTIONS: JSON.stringify({ 'claude-code': { permissionMode: 'bypassPermissions', maxTurns: 5 } }) };
    expect((await post({ prompt: 'hi', harness: 'claude-code', threadId: 'policy-operator' }, vars)).status).toBe(202);
    expect((await runnerRequests('policy-operator'))[0]?.harnessOptions).toEqual({ permissionMode: 'bypassPermissions', maxTurns: 5 });
    expect((await post({ prompt: 'hi', harness: 'claude-code', threadId: 'policy-operator-2', harnessOptions: { maxTurns: 1 } }, vars)).status).toBe(202);
    expect((await runnerRequests('policy-operator-2'))[0]?.harnessOptions).toEqual({ permissionMode: 'bypassPermissions', maxTurns: 1 });
  });

  it('answers a bad DEFAULT_HARNESS_OPTIONS with 500 misconfigured naming it', async () => {
    for (const raw of ['{not json', '{"gpt": {}}', '{"claude-code": {"maxTurns": "1; rm -rf /"}}']) {
      const { error } = await expectError(await post({ prompt: 'hi' }, { DEFAULT_HARNESS_OPTIONS: raw }), 500, 'misconfigured');
      expect(error.message).toContain('DEFAULT_HARNESS_OPTIONS');
    }
  });
});

describe('preflight with auth on', () => {
  it('refuses codex, whose key this deployment lacks, naming what is missing, and stores nothing', async () => {
    const before = await objectCount();
    const { error } = await expectError(await post({ prompt: 'hi', harness: 'codex' }), 400, 'harness_unavailable');
    expect(error.message).toMatch(/codex/);
    expect(await objectCount()).toBe(before);
  });
});
