import { chmodSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceDir } from '../src/workspace.ts';
import { cleanEnv, runBody, runId, startTestRunner, stream, type TestRunner } from './helpers.ts';

/**
 * Workspaces per tenant and thread, through the real claude-code harness and
 * the fake CLI (fixtures/claude), which writes and lists files in the
 * directory the runner gave it.
 */
const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));

let runner: TestRunner;
let root: string;
beforeAll(async () => {
  chmodSync(join(FIXTURES, 'claude'), 0o755);
  root = mkdtempSync(join(tmpdir(), 'relay-workspaces-test-'));
  runner = await startTestRunner({
    env: cleanEnv({ ANTHROPIC_API_KEY: 'sk-ant-workspace-test-key-0123', PATH: `${FIXTURES}${delimiter}${process.env.PATH ?? ''}`, RUNNER_WORKSPACE_ROOT: root }),
  });
});
afterAll(async () => {
  await runner.close();
  rmSync(root, { recursive: true, force: true });
});

/** Runs one fake-claude turn and answers its text. */
async function turn(tenant: string | null, threadId: string, prompt: string): Promise<string> {
  const body = runBody(runId('ws'), { harness: 'claude-code', tenant, threadId, messages: [{ role: 'user', content: prompt }] });
  const { chunks } = await (await stream(`${runner.url}/run`, 'POST', body)).rest();
  expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
  return chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT').map((chunk) => chunk.delta).join('');
}

describe('workspaces', () => {
  it('gives the same threadId under two tenants two workspaces: one tenant never sees the other’s files', async () => {
    await turn('tenant-a', 'shared-thread', 'MODE:write a-notes.txt');
    expect(await turn('tenant-b', 'shared-thread', 'MODE:ls')).toContain('files=[]');
    expect(await turn(null, 'shared-thread', 'MODE:ls')).toContain('files=[]');
    // The thread's own next turn finds its file.
    expect(await turn('tenant-a', 'shared-thread', 'MODE:ls')).toContain('files=[a-notes.txt]');

    const dirs = readdirSync(root).sort();
    expect(dirs).toEqual([workspaceDir(root, 'tenant-a', 'shared-thread'), workspaceDir(root, 'tenant-b', 'shared-thread'), workspaceDir(root, null, 'shared-thread')].map((dir) => dir.slice(root.length + 1)).sort());
    // Named by a hash, never by the thread id or the tenant.
    for (const dir of dirs) expect(dir).toMatch(/^[0-9a-f]{64}$/);
  });

  it('derives distinct directories from (tenant, thread) pairs that only differ in where a boundary falls', () => {
    expect(workspaceDir('/w', 'a', 'bc')).not.toBe(workspaceDir('/w', 'ab', 'c'));
    expect(workspaceDir('/w', 'x', 't')).not.toBe(workspaceDir('/w', null, 't'));
    expect(workspaceDir('/w', 'x', 't')).toBe(workspaceDir('/w', 'x', 't'));
  });
});
