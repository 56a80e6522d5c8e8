import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isStatusFrame, parseTailFrame } from '../../src/protocol/index.ts';
import type { LocalStack } from '../../scripts/local-stack.ts';
import { postRun, startStack, waitSettled } from './stack.ts';

/**
 * A workspace end to end: `POST /runs` with a `file://` git source (auth is
 * off, as under `npm start`), the Worker's request to the runner, the clone,
 * setup with a secret named in WORKSPACE_SECRETS, and the fake claude CLI
 * (container/test/fixtures/claude) listing what it finds.
 */
const FIXTURES = fileURLToPath(new URL('../../container/test/fixtures', import.meta.url));

let stack: LocalStack;
let scratch: string;
let repoUrl: string;

beforeAll(async () => {
  chmodSync(join(FIXTURES, 'claude'), 0o755);
  scratch = mkdtempSync(join(tmpdir(), 'relay-e2e-workspace-'));
  const repo = join(scratch, 'repo');
  mkdirSync(repo);
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
  git('init', '--quiet');
  writeFileSync(join(repo, 'app.ts'), 'export {};\n');
  git('add', 'app.ts');
  git('commit', '--quiet', '-m', 'first');
  repoUrl = pathToFileURL(repo).href;
  stack = await startStack({
    // A hung setup must end by the idle limit; every other run here writes its next chunk well within it.
    vars: { WORKSPACE_SECRETS: 'DEPLOY_PAT', IDLE_TIMEOUT_SECONDS: '8' },
    runnerEnv: {
      PATH: `${FIXTURES}${delimiter}${process.env.PATH ?? ''}`,
      RUNNER_WORKSPACE_ROOT: join(scratch, 'workspaces'),
      ANTHROPIC_API_KEY: 'sk-ant-api03-dummy-e2e-workspace-0123456789',
      DEPLOY_PAT: 'e2e-deploy-pat-value-9d41',
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function storedChunks(runId: string): Promise<Array<{ type: string } & Record<string, unknown>>> {
  const res = await fetch(`${stack.url}/runs/${runId}/events?fromSeq=-1`);
  const chunks: Array<{ type: string } & Record<string, unknown>> = [];
  for (const line of (await res.text()).split('\n')) {
    if (line.trim() === '') continue;
    const frame = parseTailFrame(JSON.parse(line));
    if (!isStatusFrame(frame)) chunks.push(frame.chunk as unknown as { type: string } & Record<string, unknown>);
  }
  return chunks;
}

describe('a workspace through the local stack', () => {
  it('clones and sets up before the harness, which finds the files; the stream shows the workspace step', async () => {
    const run = await postRun(stack.url, {
      harness: 'claude-code',
      prompt: 'MODE:ls',
      workspace: { source: { type: 'git', url: repoUrl }, setup: ['printf %s "$DEPLOY_PAT" > setup-ran.txt'], secrets: ['DEPLOY_PAT'] },
    });
    expect((await waitSettled(stack.url, run.runId)).status).toBe('completed');
    const chunks = await storedChunks(run.runId);
    expect(chunks.filter((chunk) => chunk.type.startsWith('STEP_')).map((chunk) => `${chunk.type}:${String(chunk.stepName)}`)).toEqual(['STEP_STARTED:workspace', 'STEP_FINISHED:workspace']);
    const text = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT').map((chunk) => chunk.delta).join('');
    expect(text).toContain('files=[app.ts,setup-ran.txt]');
  });

  it('fails a run whose setup fails with workspace_failed and the output tail', async () => {
    const run = await postRun(stack.url, { harness: 'claude-code', prompt: 'MODE:ls', workspace: { setup: ['echo "build broke here"; false'] } });
    const record = await waitSettled(stack.url, run.runId);
    expect(record.status).toBe('failed');
    expect(record.error).toMatchObject({ code: 'workspace_failed' });
    expect(record.error?.message).toContain('build broke here');
  });

  it('ends a setup that hangs by IDLE_TIMEOUT_SECONDS, and kills it', async () => {
    const pidFile = join(scratch, `hung-${Date.now()}.pid`);
    const run = await postRun(stack.url, { harness: 'claude-code', prompt: 'MODE:ls', workspace: { setup: [`echo $$ > ${pidFile}; exec sleep 600`] } });
    const record = await waitSettled(stack.url, run.runId);
    expect(record).toMatchObject({ status: 'failed', error: { code: 'idle_timeout' } });
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(pid).toBeGreaterThan(0);
    const alive = () => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    // The harness's process group is killed in the run's own time after the terminal status.
    for (let i = 0; i < 500 && alive(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(alive()).toBe(false);
  });
});
