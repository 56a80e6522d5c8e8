import { env, listDurableObjectIds } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig, type RelayEnv } from '../../src/config.ts';
import { app } from '../../src/http/app.ts';
import { harnessSecrets } from '../../src/runner/select.ts';
import { BASE } from './helpers.ts';

/**
 * `POST /runs` with a `workspace` (SPEC "Workspace and host tools"): the
 * shape, the source URL and the secret names are checked before anything is
 * stored, with `WORKSPACE_SECRETS` as the operator's list of names.
 */

const relayEnv = env as unknown as RelayEnv;
const API_TOKEN = 'workspace-test-api-token-3b9e71';
const AUTH_OFF = { ...relayEnv, WORKSPACE_SECRETS: 'DEPLOY_PAT, NPM_TOKEN' } as RelayEnv;
const AUTH_ON = { ...AUTH_OFF, API_TOKEN } as RelayEnv;
const ctx = { waitUntil: () => {}, passThroughOnException: () => {} } as unknown as ExecutionContext;

function post(on: RelayEnv, body: Record<string, unknown>): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(on.API_TOKEN ? { authorization: `Bearer ${API_TOKEN}` } : {}) };
  return Promise.resolve(app.fetch(new Request(`${BASE}/runs`, { method: 'POST', headers, body: JSON.stringify(body) }), on, ctx));
}

async function storedObjects(): Promise<Set<string>> {
  const ids = [...(await listDurableObjectIds(env.RUNS)), ...(await listDurableObjectIds(env.THREADS))];
  return new Set(ids.map((id) => id.toString()));
}

async function refused(on: RelayEnv, workspace: unknown, code: string, field: string, harness = 'claude-code'): Promise<void> {
  const before = await storedObjects();
  const res = await post(on, { prompt: 'hello', harness, workspace });
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status, JSON.stringify(body)).toBe(400);
  expect(body.error.code).toBe(code);
  expect(body.error.message).toContain(field);
  expect([...(await storedObjects())].filter((id) => !before.has(id))).toEqual([]);
}

const repo = { type: 'git', url: 'https://git.example.com/app.git' };

describe('POST /runs with a workspace', () => {
  it('refuses a secret name WORKSPACE_SECRETS does not list, with secret_not_allowed', async () => {
    await refused(AUTH_OFF, { source: repo, secrets: ['DEPLOY_PAT', 'AWS_SECRET_ACCESS_KEY'] }, 'secret_not_allowed', 'workspace.secrets[1]');
    await refused(AUTH_OFF, { secrets: ['API_TOKEN'] }, 'secret_not_allowed', 'workspace.secrets[0]');
  });

  it('refuses a source URL that is not https://, and local ones when auth is on (no SSRF, no local file reads)', async () => {
    await refused(AUTH_OFF, { source: { type: 'git', url: 'http://git.internal.example/app.git' } }, 'invalid_body', 'workspace.source.url');
    await refused(AUTH_OFF, { source: { type: 'git', url: 'ssh://git@example.com/app.git' } }, 'invalid_body', 'workspace.source.url');
    await refused(AUTH_ON, { source: { type: 'git', url: 'file:///etc' } }, 'invalid_body', 'workspace.source.url');
    await refused(AUTH_ON, { source: { type: 'git', url: 'http://127.0.0.1:9418/app.git' } }, 'invalid_body', 'workspace.source.url');
  });

  it('refuses unsafe refs, unknown fields and unbounded setup', async () => {
    await refused(AUTH_OFF, { source: { ...repo, ref: '--upload-pack=touch /tmp/x' } }, 'invalid_body', 'workspace.source.ref');
    await refused(AUTH_OFF, { source: { ...repo, ref: 'main;rm -rf /' } }, 'invalid_body', 'workspace.source.ref');
    await refused(AUTH_OFF, { source: { ...repo, ref: 'a/../b' } }, 'invalid_body', 'workspace.source.ref');
    await refused(AUTH_OFF, { source: { ...repo, depth: 5 } }, 'invalid_body', 'workspace.source.depth');
    await refused(AUTH_OFF, { source: repo, instructions: 'x' }, 'invalid_body', 'workspace.instructions');
    await refused(AUTH_OFF, { setup: Array.from({ length: 33 }, () => 'true') }, 'invalid_body', 'workspace.setup');
    await refused(AUTH_OFF, { setup: ['x'.repeat(4_097)] }, 'invalid_body', 'workspace.setup[0]');
    await refused(AUTH_OFF, { setup: [''] }, 'invalid_body', 'workspace.setup[0]');
  });

  it('refuses a workspace on the demo and chat harnesses, which work on no files', async () => {
    await refused(AUTH_OFF, { source: repo }, 'invalid_body', 'workspace', 'demo');
    await refused(AUTH_OFF, { setup: ['true'] }, 'invalid_body', 'workspace', 'chat');
  });
});

describe('WORKSPACE_SECRETS and the container', () => {
  it('reads names, and fails loudly on anything that is not a variable name', () => {
    expect(readConfig(AUTH_OFF).workspaceSecrets).toEqual(['DEPLOY_PAT', 'NPM_TOKEN']);
    expect(() => readConfig({ ...relayEnv, WORKSPACE_SECRETS: 'DEPLOY_PAT,bad-name' } as RelayEnv)).toThrow(ConfigError);
  });

  it('passes the listed names that are set, and no other, to the container’s environment', () => {
    const secrets = harnessSecrets({ ...AUTH_OFF, DEPLOY_PAT: 'deploy-pat-value', UNLISTED_PAT: 'unlisted' } as RelayEnv, ['DEPLOY_PAT', 'NPM_TOKEN']);
    expect(secrets.DEPLOY_PAT).toBe('deploy-pat-value');
    expect(secrets).not.toHaveProperty('NPM_TOKEN');
    expect(secrets).not.toHaveProperty('UNLISTED_PAT');
  });
});
