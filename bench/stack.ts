import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, stopGroup } from '../scripts/local-stack.ts';
import { newRunnerToken, writePrivateEnvFile } from '../scripts/private-env.ts';
import { writeBenchConfig } from './config.ts';

/**
 * The bench's local stack: the runner program as its own process (so the
 * clients the bench runs in this process never delay it) and the bench
 * Worker under `wrangler dev -c bench/tmp/wrangler.json` (generated from the
 * product's wrangler.toml, see config.ts), with a fresh state directory that
 * is deleted on close.
 */
export interface BenchStack {
  url: string;
  runnerUrl: string;
  /** wrangler's inspector (Chrome DevTools protocol) for the Worker: profile the objects with it. */
  inspectorUrl: string;
  /** Every workerd process wrangler started (the runtime and its dev proxy). */
  workerdPids(): number[];
  /** The runner program's process (its harness processes are its children, not counted). */
  runnerPid: number;
  close(): Promise<void>;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const WRANGLER = join(ROOT, 'node_modules/wrangler/bin/wrangler.js');
const READY_TIMEOUT_MS = 90_000;

export async function startBenchStack(onOutput?: (line: string) => void): Promise<BenchStack> {
  const config = writeBenchConfig();
  const state = mkdtempSync(join(tmpdir(), 'harness-relay-bench-'));
  const runnerPort = await freePort();
  const port = await freePort();
  const inspectorPort = await freePort();
  const runnerUrl = `http://127.0.0.1:${runnerPort}`;
  const url = `http://127.0.0.1:${port}`;
  const quiet = { CLOUDFLARE_CF_FETCH_ENABLED: 'false', WRANGLER_SEND_METRICS: 'false', FORCE_COLOR: '0' };
  const output: string[] = [];
  const collect = (name: string) => (data: Buffer) => {
    for (const line of data.toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      output.push(`[${name}] ${line}`);
      if (output.length > 200) output.shift();
      onOutput?.(`[${name}] ${line}`);
    }
  };
  const start = (name: string, args: string[], env: Record<string, string>) => {
    // Own process group: stopping it stops the harness processes / workerd too.
    const child = spawn(process.execPath, args, { cwd: ROOT, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    child.stdout!.on('data', collect(name));
    child.stderr!.on('data', collect(name));
    return child;
  };

  const runnerToken = newRunnerToken();
  // The Worker gets the token from a private file (see private-env.ts), the runner in its environment.
  const secrets = writePrivateEnvFile({ RUNNER_TOKEN: runnerToken });
  // The claude-code harness runs the test suite's Claude Code double (a CLI on PATH, no network), so one
  // figure can measure what a real harness's answer costs to store; the key is the double's, not a secret.
  const runner = start('runner', ['container/src/main.ts'], {
    RUNNER_PORT: String(runnerPort),
    RUNNER_HOST: '127.0.0.1',
    RUNNER_TOKEN: runnerToken,
    PATH: `${join(ROOT, 'container/test/doubles/bin')}${delimiter}${process.env.PATH ?? ''}`,
    ANTHROPIC_API_KEY: 'sk-ant-bench-double-key',
  });
  const worker = start(
    'wrangler',
    [
      WRANGLER, 'dev', '-c', config.path, '--ip', '127.0.0.1', '--port', String(port),
      '--inspector-port', String(inspectorPort), '--persist-to', state, '--var', `RUNNER_URL:${runnerUrl}`, '--env-file', secrets.path,
      // The benchmark's longest runs are 100,000 deltas (plus the demo's own events): above the default RUN_MAX_EVENTS.
      '--var', 'RUN_MAX_EVENTS:1000000',
      '--show-interactive-dev-session=false', '--log-level', 'warn',
    ],
    { ...quiet, CLOUDFLARE_LOAD_DEV_VARS_FROM_DOT_ENV: 'true' },
  );
  const close = async () => {
    await Promise.all([stopGroup(worker), stopGroup(runner)]);
    rmSync(state, { recursive: true, force: true });
    secrets.remove();
  };
  try {
    await waitForHealth(`${runnerUrl}/health`, runner);
    await waitForHealth(`${url}/health`, worker);
  } catch (error) {
    await close();
    throw new Error(`${(error as Error).message}\n--- output ---\n${output.join('\n')}`);
  }
  return { url, runnerUrl, inspectorUrl: `http://127.0.0.1:${inspectorPort}`, workerdPids: () => descendants(worker.pid!, 'workerd'), runnerPid: runner.pid!, close };
}

async function waitForHealth(url: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with code ${child.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${url} did not answer within ${READY_TIMEOUT_MS / 1000} s`);
}

/** Processes below `root` whose command name is `name`, from /proc. */
function descendants(root: number, name: string): number[] {
  const parent = new Map<number, number>();
  const comm = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid …; comm may contain spaces, so split after the last ')'.
      const close = stat.lastIndexOf(')');
      comm.set(Number(entry), stat.slice(stat.indexOf('(') + 1, close));
      parent.set(Number(entry), Number(stat.slice(close + 2).split(' ')[1]));
    } catch {
      // Exited while listing.
    }
  }
  const found: number[] = [];
  for (const [pid, name_] of comm) {
    if (name_ !== name) continue;
    for (let p: number | undefined = pid; p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        found.push(pid);
        break;
      }
    }
  }
  return found;
}

/** Resident memory of the processes, bytes (VmRSS). */
export function residentBytes(pids: readonly number[]): number {
  let total = 0;
  for (const pid of pids) {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (match) total += Number(match[1]) * 1024;
  }
  return total;
}
