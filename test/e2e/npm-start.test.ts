import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/local-stack.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Every live process whose ancestry leads to `pid`, from /proc (Linux). */
function descendants(pid: number): number[] {
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (ppid) comes after the parenthesised command name, which may contain spaces.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(Number(entry), ppid);
    } catch {
      // Exited while we looked.
    }
  }
  const found: number[] = [];
  const walk = (parent: number) => {
    for (const [child, ppid] of parents) {
      if (ppid === parent) {
        found.push(child);
        walk(child);
      }
    }
  };
  walk(pid);
  return found;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('npm start', () => {
  it('serves the API and the page on PORT, prints a banner, and leaves no process behind on SIGTERM', async () => {
    const port = await freePort();
    const runnerPort = await freePort();
    const child = spawn(process.execPath, ['scripts/dev.ts'], {
      cwd: ROOT,
      env: { ...process.env, PORT: String(port), RUNNER_PORT: String(runnerPort) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (data: Buffer) => (output += data.toString()));
    child.stderr!.on('data', (data: Buffer) => (output += data.toString()));
    try {
      for (let i = 0; i < 600 && !output.includes('harness-relay is running'); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(output).toContain(`http://127.0.0.1:${port}`);
      expect(output).toContain('default harness   demo');
      expect(await (await fetch(`http://127.0.0.1:${port}/health`)).json()).toMatchObject({ ok: true });
      expect((await fetch(`http://127.0.0.1:${port}/`)).headers.get('content-type')).toContain('text/html');
      expect(await (await fetch(`http://127.0.0.1:${runnerPort}/health`)).json()).toMatchObject({ ok: true });
      const started = descendants(child.pid!);
      expect(started.length).toBeGreaterThan(0);
      child.kill('SIGTERM');
      await once(child, 'exit');
      for (let i = 0; i < 100 && started.some(alive); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(started.filter(alive)).toEqual([]);
      await expect(fetch(`http://127.0.0.1:${port}/health`)).rejects.toThrow();
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
