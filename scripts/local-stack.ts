import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { delimiter, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRunner, type RunningRunner } from '../container/src/server.ts';
import { readDevVars } from './dev-vars.ts';
import { newRunnerToken, writePrivateEnvFile } from './private-env.ts';

/**
 * The whole service on loopback with no Docker: the runner as an in-process
 * Node server and the Worker under `wrangler dev` (containers disabled),
 * pointed at it with RUNNER_URL. `npm start` and the end-to-end tests both
 * start it through here, so the tests exercise what a user runs.
 */
export interface LocalStackOptions {
  /** The Worker's port; 0 picks a free one. */
  port: number;
  /** The runner's port; 0 picks a free one. */
  runnerPort: number;
  /** Use a runner that is already running (a separate process) instead of starting one in-process. */
  runnerUrl?: string;
  /** The RUNNER_TOKEN that external runner was started with; required with `runnerUrl`. */
  runnerToken?: string;
  /** Extra Worker variables (`--var`), e.g. a short STALL_TIMEOUT_SECONDS in tests. */
  vars?: Record<string, string>;
  /** Where wrangler keeps local Durable Object state (default: .wrangler/state). */
  persistTo?: string;
  /** wrangler's own output, line by line. Default: dropped. */
  onOutput?: (line: string) => void;
  /** Extra environment for the in-process runner (over .dev.vars), e.g. a CLI double's PATH and provider base URLs. */
  runnerEnv?: Record<string, string>;
}

export interface LocalStack {
  url: string;
  runnerUrl: string;
  /** The token the runner answers to (fresh for this start unless `runnerToken` was given). */
  runnerToken: string;
  /** The in-process runner; absent when `runnerUrl` named an external one. */
  runner: RunningRunner | undefined;
  /** The wrangler dev process (its process group is the Worker and workerd). */
  worker: ChildProcess;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WRANGLER = fileURLToPath(new URL('../node_modules/wrangler/bin/wrangler.js', import.meta.url));
const READY_TIMEOUT_MS = 60_000;
/** The Worker's own secrets: a harness (or anything the runner starts) has no use for them. */
const WORKER_ONLY = ['API_TOKEN', 'ATTACH_TOKEN_SECRET', 'RUNNER_SECRET'];

export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  if (address === null || typeof address === 'string') throw new Error('could not pick a free port');
  return address.port;
}

export async function startLocalStack(options: LocalStackOptions): Promise<LocalStack> {
  if (options.runnerUrl !== undefined && options.runnerToken === undefined) throw new Error('runnerUrl needs the runnerToken that runner was started with');
  const devVarsPath = `${ROOT}/.dev.vars`;
  const devVars = readDevVars(devVarsPath);
  const port = options.port || (await freePort());
  const runnerToken = options.runnerToken ?? newRunnerToken();
  // The runner inherits the machine's environment and .dev.vars: that is where
  // harness keys live locally, exactly as in the container's environment.
  const runnerEnv: Record<string, string | undefined> = { ...process.env, ...devVars, ...options.runnerEnv, RUNNER_TOKEN: runnerToken };
  for (const name of WORKER_ONLY) delete runnerEnv[name];
  const runner = options.runnerUrl
    ? undefined
    : await startRunner({ port: options.runnerPort, host: '127.0.0.1', env: runnerEnv, log: () => {} });
  const runnerUrl = options.runnerUrl ?? runner!.url;
  const vars = { RUNNER_URL: runnerUrl, ...options.vars };
  const args = [WRANGLER, 'dev', '--ip', '127.0.0.1', '--port', String(port), '--inspector-port', String(await freePort()), '--show-interactive-dev-session=false'];
  for (const [name, value] of Object.entries(vars)) args.push('--var', `${name}:${value}`);
  // The token goes in a private file, not a --var (see private-env.ts). Any
  // --env-file turns off wrangler's own .dev.vars lookup, so .dev.vars is
  // passed first (same dotenv reader; values in later files win).
  const secrets = writePrivateEnvFile({ RUNNER_TOKEN: runnerToken });
  if (existsSync(devVarsPath)) args.push('--env-file', devVarsPath);
  args.push('--env-file', secrets.path);
  if (options.persistTo) args.push('--persist-to', options.persistTo);
  const worker = spawn(process.execPath, args, {
    cwd: ROOT,
    // Its own process group, so stopping the stack stops workerd too.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      // wrangler's custom build runs `node`: make it this Node (22), not whatever PATH finds first.
      PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}`,
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      // --env-file is ignored when this is false; the runner token must get through.
      CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: 'true',
      WRANGLER_SEND_METRICS: 'false',
      FORCE_COLOR: '0',
    },
  });
  const output: string[] = [];
  const onData = (data: Buffer) => {
    for (const line of data.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      output.push(line);
      if (output.length > 200) output.shift();
      options.onOutput?.(line);
    }
  };
  worker.stdout!.on('data', onData);
  worker.stderr!.on('data', onData);

  const url = `http://127.0.0.1:${port}`;
  const close = async () => {
    await stopGroup(worker);
    secrets.remove();
    await runner?.close();
  };
  try {
    await waitForHealth(url, worker);
  } catch (error) {
    await close();
    throw new Error(`${(error as Error).message}\n--- wrangler output ---\n${output.join('\n')}`);
  }
  return { url, runnerUrl, runnerToken, runner, worker, close };
}

async function waitForHealth(url: string, worker: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (worker.exitCode !== null) throw new Error(`wrangler dev exited with code ${worker.exitCode}`);
    try {
      const res = await fetch(`${url}/health`);
      if (res.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the Worker did not answer ${url}/health within ${READY_TIMEOUT_MS / 1000} s`);
}

/** SIGTERM to the whole group, SIGKILL if it lingers: no orphan workerd. */
export async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
  const exited = once(child, 'exit');
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    return;
  }
  const timer = setTimeout(() => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }, 5_000);
  await exited;
  clearTimeout(timer);
}
