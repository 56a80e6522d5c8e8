import { execFile } from 'node:child_process';
import { access, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkspaceRequest } from '../../../src/protocol/index.ts';
import type { WireChunk } from '../chunk-writer.ts';

/** SPEC: a failure's message ends with the command's output tail, this long at most. */
const OUTPUT_TAIL_CHARS = 1_500;

/** The step the stream shows while the workspace is cloned and set up (STEP_STARTED / STEP_FINISHED). */
export const WORKSPACE_STEP = 'workspace';

/**
 * Beside the directory, not in it: the agent never sees it, and a `git clean`
 * in the workspace cannot remove it. Written once clone and setup succeeded,
 * so a thread's later turns skip both; a failed setup is tried again next turn.
 */
export function readyMarker(dir: string): string {
  return `${dir}.workspace-ready`;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

class WorkspaceFailure extends Error {}

function tail(output: string): string {
  const trimmed = output.trim();
  return trimmed.length > OUTPUT_TAIL_CHARS ? `…${trimmed.slice(-OUTPUT_TAIL_CHARS)}` : trimmed;
}

/**
 * Hand-written, because @tanstack/ai-sandbox 0.2.4's exec-backed `git.clone`
 * ignores git's exit status: a clone that failed would look done and its
 * output would be lost. Argument list, no shell; `--` ends the options, and
 * the URL and ref were validated at `POST /runs`.
 */
function clone(source: NonNullable<WorkspaceRequest['source']>, dir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const args = ['clone', '--depth', '1', ...(source.ref !== undefined ? ['--branch', source.ref] : []), '--', source.url, dir];
  return new Promise((resolve, reject) => {
    execFile('git', args, { env: { ...env, GIT_TERMINAL_PROMPT: '0' }, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new WorkspaceFailure(`git clone ${source.url} failed (${error.code ?? error.message}):\n${tail(`${stdout}\n${stderr}`)}`));
      else resolve();
    });
  });
}

function inSubshell(command: string): string {
  return `(\n${command}\n)`;
}

/**
 * Clone, then setup through @tanstack/ai-sandbox's `bootstrapWorkspace` (the
 * workspace definition's setup in one shell, stderr merged, secrets in its
 * environment), on the local-process handle the harness runs in.
 */
async function prepare(workspace: WorkspaceRequest, dir: string, env: Record<string, string | undefined>): Promise<void> {
  const [{ bootstrapWorkspace, createSecrets, defineWorkspace }, { localProcessSandbox }] = await Promise.all([
    import('@tanstack/ai-sandbox'),
    import('@tanstack/ai-sandbox-local-process'),
  ]);
  await mkdir(dir, { recursive: true });
  if (workspace.source !== undefined && !(await exists(join(dir, '.git')))) await clone(workspace.source, dir, env);
  const secrets: Record<string, string> = {};
  // harness-env.ts put exactly the named secrets in this process's environment.
  for (const name of workspace.secrets ?? []) if (env[name] !== undefined) secrets[name] = env[name];
  const commands = workspace.setup ?? [];
  const definition = defineWorkspace({
    // Already cloned above; bootstrap skips a source whose `.git` exists.
    source: workspace.source !== undefined ? { type: 'git', url: workspace.source.url, ...(workspace.source.ref !== undefined ? { ref: workspace.source.ref } : {}) } : { type: 'none' },
    // The default root, `/workspace`: the local-process handle maps it onto `dir`.
    // Each in a subshell: bootstrap runs setup in one long-lived shell, and in 0.2.4 a command
    // that ends that shell (`exit 1`) leaves it reading the dead shell's output forever.
    setup: commands.map(inSubshell),
    secrets: createSecrets(secrets),
    // No lockfile guessing: the caller's setup says what to install.
    packageManager: 'npm',
  });
  const handle = await localProcessSandbox({ dir }).create({ id: 'harness-relay-workspace' });
  try {
    await bootstrapWorkspace(handle, definition);
  } catch (error) {
    // The message is "setup step failed: <command> (exit N)\n<output tail>"; it names the caller's command.
    const message = error instanceof Error ? error.message : String(error);
    const failed = commands.find((command) => message.includes(inSubshell(command)));
    throw new WorkspaceFailure(failed === undefined ? message : message.replace(inSubshell(failed), failed));
  }
  await writeFile(readyMarker(dir), `${new Date().toISOString()}\n`);
}

/**
 * The workspace step as chunks: STEP_STARTED, then STEP_FINISHED, or a
 * `RUN_ERROR workspace_failed` that ends the run (the harness never starts).
 * Yields `false` as its return value when the run must not go on.
 */
export async function* workspaceStep(workspace: WorkspaceRequest, dir: string, env: Record<string, string | undefined>): AsyncGenerator<WireChunk, boolean> {
  yield { type: 'STEP_STARTED', stepName: WORKSPACE_STEP, timestamp: Date.now() };
  try {
    if (!(await exists(readyMarker(dir)))) await prepare(workspace, dir, env);
  } catch (error) {
    const message = error instanceof WorkspaceFailure ? error.message : `The workspace could not be prepared: ${error instanceof Error ? error.message : String(error)}`;
    // Redacted by the writer like every other line.
    yield { type: 'RUN_ERROR', code: 'workspace_failed', message, timestamp: Date.now() };
    return false;
  }
  yield { type: 'STEP_FINISHED', stepName: WORKSPACE_STEP, timestamp: Date.now() };
  return true;
}
