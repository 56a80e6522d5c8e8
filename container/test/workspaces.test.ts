import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceDir } from '../src/workspace.ts';
import { runBody, runId, startCliRunner, stream, type CliRunner } from './helpers.ts';

/**
 * Workspaces per tenant and thread, through the real claude-code harness and
 * the fake CLI (fixtures/claude), which writes and lists files in the
 * directory the runner gave it.
 */
let runner: CliRunner;
let root: string;
beforeAll(async () => {
  runner = await startCliRunner('workspaces-test', { ANTHROPIC_API_KEY: 'sk-ant-workspace-test-key-0123' });
  root = runner.workspaceRoot;
});
afterAll(() => runner.close());

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
