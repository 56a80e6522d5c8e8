import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { EventSchemas } from '@ag-ui/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harnessEnv } from '../src/harness-env.ts';
import { createRedactor } from '../src/redact.ts';
import { workspaceDir } from '../src/workspace.ts';
import { cleanEnv, runBody, runId, startTestRunner, stream, type Chunk, type TestRunner } from './helpers.ts';

/**
 * SPEC "Workspace and host tools", in the runner: a git source cloned once
 * per workspace, setup run once, secrets by name, progress as a `workspace`
 * step, a failure as `RUN_ERROR workspace_failed`. Through the real
 * claude-code harness and the fake CLI (fixtures/claude), which lists the
 * files it finds and prints a variable it was given.
 */
const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));
const SECRET = 'ws-secret-value-7f3a9c1e';

let runner: TestRunner;
let root: string;
let repoUrl: string;
let scratch: string;

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' } });
}

beforeAll(async () => {
  chmodSync(join(FIXTURES, 'claude'), 0o755);
  scratch = mkdtempSync(join(tmpdir(), 'relay-workspace-setup-test-'));
  const repo = join(scratch, 'repo');
  mkdirSync(repo);
  git(repo, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(repo, 'README.md'), '# from the repo\n');
  git(repo, 'add', 'README.md');
  git(repo, 'commit', '--quiet', '-m', 'first');
  repoUrl = pathToFileURL(repo).href;
  root = join(scratch, 'workspaces');
  runner = await startTestRunner({
    env: cleanEnv({ ANTHROPIC_API_KEY: 'sk-ant-workspace-setup-key-0123', DEPLOY_PAT: SECRET, OTHER_PAT: 'never-asked-for-value', PATH: `${FIXTURES}${delimiter}${process.env.PATH ?? ''}`, RUNNER_WORKSPACE_ROOT: root }),
  });
});
afterAll(async () => {
  await runner.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function turn(threadId: string, prompt: string, workspace: unknown): Promise<Chunk[]> {
  const body = runBody(runId('wss'), { harness: 'claude-code', threadId, workspace, messages: [{ role: 'user', content: prompt }] });
  const { chunks } = await (await stream(`${runner.url}/run`, 'POST', body)).rest();
  return chunks;
}

function text(chunks: Chunk[]): string {
  return chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT').map((chunk) => chunk.delta).join('');
}

function steps(chunks: Chunk[]): string[] {
  return chunks.filter((chunk) => chunk.type.startsWith('STEP_')).map((chunk) => `${chunk.type}:${String(chunk.stepName)}`);
}

describe('a run with a workspace', () => {
  it('clones the repository and runs setup once; a later turn on the thread finds both without doing either again', async () => {
    const workspace = {
      source: { type: 'git', url: repoUrl, ref: 'main' },
      // A counter: one line per setup run. The secret reaches setup by name.
      setup: ['echo ran >> ../setup-count.txt', 'printf %s "$DEPLOY_PAT" > from-setup.txt'],
      secrets: ['DEPLOY_PAT'],
    };
    const first = await turn('ws-thread', 'MODE:ls MODE:env DEPLOY_PAT', workspace);
    expect(first.map((chunk) => chunk.type).slice(0, 3)).toEqual(['RUN_STARTED', 'STEP_STARTED', 'STEP_FINISHED']);
    expect(first.at(-1)?.type).toBe('RUN_FINISHED');
    expect(steps(first)).toEqual(['STEP_STARTED:workspace', 'STEP_FINISHED:workspace']);
    for (const chunk of first.filter((c) => c.type.startsWith('STEP_'))) expect(EventSchemas.safeParse(chunk).success).toBe(true);
    // The harness sees the cloned file and setup's; the secret reached it, and is redacted in the stream.
    expect(text(first)).toContain('files=[README.md,from-setup.txt]');
    expect(text(first)).toContain('env=[redacted]');
    expect(JSON.stringify(first)).not.toContain(SECRET);
    const dir = workspaceDir(root, null, 'ws-thread');
    expect(readFileSync(join(dir, 'from-setup.txt'), 'utf8')).toBe(SECRET);
    const head = git(dir, 'rev-parse', 'HEAD');

    const second = await turn('ws-thread', 'MODE:ls', workspace);
    expect(second.at(-1)?.type).toBe('RUN_FINISHED');
    expect(steps(second)).toEqual(['STEP_STARTED:workspace', 'STEP_FINISHED:workspace']);
    expect(text(second)).toContain('files=[README.md,from-setup.txt]');
    // Setup ran once, and the checkout is the first one (no second clone: one reflog entry, the clone's).
    expect(readFileSync(join(root, 'setup-count.txt'), 'utf8')).toBe('ran\n');
    expect(git(dir, 'rev-parse', 'HEAD')).toBe(head);
    expect(git(dir, 'reflog').trim().split('\n')).toHaveLength(1);
  });

  it('gives the harness only the secrets the run named', async () => {
    const chunks = await turn('ws-thread-names', 'MODE:env OTHER_PAT', { setup: ['true'], secrets: ['DEPLOY_PAT'] });
    expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
    expect(text(chunks)).toContain('env=(unset)');
  });

  it('ends a run whose setup fails with RUN_ERROR workspace_failed and the command’s output; the harness never starts', async () => {
    const chunks = await turn('ws-thread-fail', 'MODE:write should-not-exist.txt', { source: { type: 'git', url: repoUrl }, setup: ['echo "installing deps"; echo "npm ERR! missing script: build" >&2; exit 7'] });
    const last = chunks.at(-1)!;
    expect(last).toMatchObject({ type: 'RUN_ERROR', code: 'workspace_failed' });
    expect(String(last.message)).toContain('exit 7');
    expect(String(last.message)).toContain('npm ERR! missing script: build');
    expect(steps(chunks)).toEqual(['STEP_STARTED:workspace']);
    expect(chunks.some((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT')).toBe(false);
    const dir = workspaceDir(root, null, 'ws-thread-fail');
    expect(existsSync(join(dir, 'should-not-exist.txt'))).toBe(false);
    // Not marked ready: the next turn tries setup again.
    expect(existsSync(`${dir}.workspace-ready`)).toBe(false);
  });

  it('ends a run whose clone fails with workspace_failed and git’s message', async () => {
    const chunks = await turn('ws-thread-clone', 'MODE:ls', { source: { type: 'git', url: pathToFileURL(join(scratch, 'no-such-repo')).href } });
    const last = chunks.at(-1)!;
    expect(last).toMatchObject({ type: 'RUN_ERROR', code: 'workspace_failed' });
    expect(String(last.message)).toMatch(/git clone .* failed[\s\S]*does not exist|not appear to be a git repository/);
  });
});

describe('workspace secrets in the least environment', () => {
  const env = { PATH: '/bin', DEPLOY_PAT: SECRET, OTHER_PAT: 'other-value-123456', RUNNER_TOKEN: 'runner-token-value-0123' };

  it('adds exactly the named secrets, and never the runner’s own credentials', () => {
    expect(harnessEnv('claude-code', env)).toEqual({ PATH: '/bin' });
    expect(harnessEnv('claude-code', env, ['DEPLOY_PAT'])).toEqual({ PATH: '/bin', DEPLOY_PAT: SECRET });
    expect(harnessEnv('codex', env, ['DEPLOY_PAT', 'RUNNER_TOKEN'])).toEqual({ PATH: '/bin', DEPLOY_PAT: SECRET });
  });

  it('redacts a named secret whatever its name', () => {
    expect(createRedactor(env)(`x ${SECRET} y`)).toBe(`x ${SECRET} y`);
    expect(createRedactor(env, ['DEPLOY_PAT'])(`x ${SECRET} y`)).toBe('x [redacted] y');
  });
});
