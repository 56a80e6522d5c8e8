import { describe, expect, it } from 'vitest';
import { RUNNER_PROCESS_ID } from '../../src/runner/sandbox-transport.ts';
import { runnerTokenKey, sandboxRunnerToken } from '../../src/runner/runner-token.ts';
import { SANDBOX_PROJECT_VARS } from '../support/sandbox-vars.ts';
import { containersOf, createRun, sandboxEnv, sandboxIdOf, sandboxOf, settled } from './helpers.ts';

/** `NAME=value` lines (env(1), or /proc/<pid>/environ with NULs turned into newlines). */
function parseEnv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq)] = line.slice(eq + 1);
  }
  return out;
}

async function environOf(sandboxId: string, pid: number): Promise<Record<string, string>> {
  const result = await sandboxOf(sandboxId).exec(`tr '\\0' '\\n' < /proc/${pid}/environ`);
  expect(result.exitCode).toBe(0);
  return parseEnv(result.stdout);
}

/** What the transport derives for a sandbox from this project's RUNNER_SECRET. */
async function expectedToken(sandboxId: string): Promise<string> {
  const key = await runnerTokenKey({ runnerSecret: SANDBOX_PROJECT_VARS.RUNNER_SECRET, attachTokenSecret: undefined, apiToken: undefined });
  return sandboxRunnerToken(key, sandboxId);
}

/** A finished run's sandbox, its container and its runner. */
async function finishedRun() {
  const created = await createRun({ prompt: 'env', harnessOptions: { chunks: 3, delayMs: 0 } });
  expect((await settled(created.json.runId)).status).toBe('completed');
  const sandboxId = await sandboxIdOf(created.json.runId);
  const [container] = await containersOf(sandboxId);
  const runner = await sandboxOf(sandboxId).getProcess(RUNNER_PROCESS_ID);
  return { runId: created.json.runId, sandboxId, container: container!, runner: runner! };
}

describe('what the runner is given, and what nothing else in the container sees', () => {
  it("the runner process's env holds the harness key and its runner token; the session's env and the control server's do not", async () => {
    const { sandboxId, container, runner } = await finishedRun();
    const token = await expectedToken(sandboxId);
    const secrets = [SANDBOX_PROJECT_VARS.ANTHROPIC_API_KEY, token];

    const runnerEnv = await environOf(sandboxId, runner.pid!);
    expect(runnerEnv.ANTHROPIC_API_KEY).toBe(SANDBOX_PROJECT_VARS.ANTHROPIC_API_KEY);
    expect(runnerEnv.RUNNER_TOKEN).toBe(token);
    // Not the Worker's own secret, and never in the command line the SDK logs.
    expect(Object.values(runnerEnv)).not.toContain(SANDBOX_PROJECT_VARS.RUNNER_SECRET);
    for (const secret of secrets) expect(runner.command).not.toContain(secret);

    // A command in the SDK's default session (what exec and every later startProcess inherit).
    const session = await sandboxOf(sandboxId).exec('env');
    expect(session.exitCode).toBe(0);
    const sessionEnv = parseEnv(session.stdout);
    expect(sessionEnv.ANTHROPIC_API_KEY).toBeUndefined();
    expect(sessionEnv.RUNNER_TOKEN).toBeUndefined();
    for (const secret of [...secrets, SANDBOX_PROJECT_VARS.RUNNER_SECRET]) expect(session.stdout).not.toContain(secret);

    // The control server itself (the container's entrypoint), which has what the container was started with.
    const control = await environOf(sandboxId, container.pid);
    expect(control.SANDBOX_LOG_LEVEL).toBe(SANDBOX_PROJECT_VARS.SANDBOX_LOG_LEVEL);
    for (const secret of [...secrets, SANDBOX_PROJECT_VARS.RUNNER_SECRET]) expect(Object.values(control)).not.toContain(secret);
  });

  it('runner token: the runner in the sandbox answers only its own sandbox token; /health needs none', async () => {
    const { runId, sandboxId, container } = await finishedRun();
    // The runner's container port, reached the way getTcpPort(8788) reaches it.
    const runner = `${sandboxEnv.CONTAINER_HOST_URL}/instances/${container.instance}/port/8788`;
    const stream = `${runner}/runs/${runId}/stream?fromSeq=-1`;
    const status = async (url: string, headers: Record<string, string> = {}) => {
      const response = await fetch(url, { headers });
      await response.arrayBuffer();
      return response.status;
    };
    expect(await status(`${runner}/health`)).toBe(200);
    expect(await status(stream)).toBe(401);
    expect(await status(stream, { authorization: `Bearer ${await expectedToken(`${sandboxId}-other`)}` })).toBe(401);
    expect(await status(stream, { authorization: `Bearer ${await expectedToken(sandboxId)}` })).toBe(200);
  });
});
