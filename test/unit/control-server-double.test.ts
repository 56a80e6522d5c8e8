import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The control-server double on its own, for the semantics of
 * @cloudflare/sandbox 0.12.x's container that the sandbox project relies
 * on but does not single out: no duplicate check on processId, per-process
 * env scoped to that process, port-watch's event sequence.
 */
const DOUBLE = resolve(import.meta.dirname, '../support/control-server-double/main.ts');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

let child: ChildProcess;
let base: string;
let appPort: number;
let workspace: string;

beforeAll(async () => {
  const control = await freePort();
  appPort = await freePort();
  workspace = mkdtempSync(join(tmpdir(), 'double-test-'));
  child = spawn(process.execPath, [DOUBLE], {
    env: {
      PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
      CONTAINER_PORT_MAP: JSON.stringify({ 3000: control, 8788: appPort }),
      CONTAINER_PATH_MAP: JSON.stringify({ '/workspace': workspace }),
    },
    stdio: 'inherit',
  });
  base = `http://127.0.0.1:${control}`;
  for (let i = 0; i < 200; i++) {
    if (await fetch(`${base}/`).then((r) => r.ok, () => false)) return;
    await new Promise((done) => setTimeout(done, 25));
  }
  throw new Error('the double did not listen');
});

afterAll(async () => {
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
  rmSync(workspace, { recursive: true, force: true });
});

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  return (await (await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as Record<string, unknown>;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The `data:` events of an SSE body, parsed. */
async function events(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  return text.split('\n\n').filter((frame) => frame.startsWith('data: ')).map((frame) => JSON.parse(frame.slice(6)) as Record<string, unknown>);
}

describe('control-server double (mirrors @cloudflare/sandbox 0.12.10)', () => {
  it('overwrites a processId that exists, with no check: both processes run, the id names the second', async () => {
    const first = await post('/api/process/start', { command: 'sleep 30', processId: 'dup', sessionId: 's' });
    const second = await post('/api/process/start', { command: 'sleep 31', processId: 'dup', sessionId: 's' });
    expect(first.processId).toBe('dup');
    expect(second.processId).toBe('dup');
    expect(alive(first.pid as number) && alive(second.pid as number)).toBe(true);
    const got = (await (await fetch(`${base}/api/process/dup`)).json()) as { process: { pid: number; command: string; status: string } };
    expect(got.process).toMatchObject({ pid: second.pid, command: 'sleep 31', status: 'running' });
    const killed = await (await fetch(`${base}/api/process/kill-all`, { method: 'DELETE' })).json();
    expect(killed).toMatchObject({ success: true });
    process.kill(first.pid as number, 'SIGKILL');
  });

  it('exports per-process env to that process only, not to its session', async () => {
    await post('/api/session/create', { id: 'scoped', env: { SHARED: 'session' }, cwd: '/workspace' });
    const proc = await post('/api/process/start', { command: 'echo "$SHARED $ONLY_MINE $PWD"', processId: 'env', sessionId: 'scoped', env: { ONLY_MINE: 'secret' } });
    for (let i = 0; i < 400; i++) {
      const { process: state } = (await (await fetch(`${base}/api/process/env`)).json()) as { process: { status: string } };
      if (state.status !== 'running') break;
      await new Promise((done) => setTimeout(done, 25));
    }
    const logs = (await (await fetch(`${base}/api/process/${proc.processId as string}/logs`)).json()) as { stdout: string };
    expect(logs.stdout.trim()).toBe(`session secret ${workspace}`);
    const later = await post('/api/execute', { command: 'echo "${ONLY_MINE:-unset} $SHARED"', sessionId: 'scoped' });
    expect(later).toMatchObject({ success: true, exitCode: 0, stdout: 'unset session\n' });
  });

  it('port-watch: watching then process_exited when the process dies first; watching then ready once the port answers', async () => {
    const dying = await post('/api/process/start', { command: 'exit 3', processId: 'dies' });
    const exited = await events(await fetch(`${base}/api/port-watch`, { method: 'POST', body: JSON.stringify({ port: 8788, mode: 'http', path: '/', processId: dying.processId, interval: 100 }) }));
    expect(exited.map((event) => event.type)).toEqual(['watching', 'process_exited']);
    expect(exited[1]).toMatchObject({ exitCode: 3 });

    // APP_PORT=8788 names the container port: the process binds the host port behind it, on loopback.
    const server = `require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.env.APP_PORT), process.env.APP_HOST)`;
    const serving = await post('/api/process/start', { command: `node -e "${server}"`, processId: 'serves', env: { APP_PORT: '8788', APP_HOST: '0.0.0.0' } });
    const ready = await events(await fetch(`${base}/api/port-watch`, { method: 'POST', body: JSON.stringify({ port: 8788, mode: 'http', path: '/', statusMin: 200, statusMax: 200, processId: serving.processId, interval: 100 }) }));
    expect(ready.map((event) => event.type)).toEqual(['watching', 'ready']);
    expect(ready[1]).toMatchObject({ port: 8788, statusCode: 200 });
    expect(await (await fetch(`http://127.0.0.1:${appPort}/`)).text()).toBe('ok');
    await fetch(`${base}/api/process/serves`, { method: 'DELETE' });
    const status = (await (await fetch(`${base}/api/process/serves`)).json()) as { process: { status: string } };
    expect(status.process.status).toBe('killed');
  });

  it('answers an unknown process with the SDK error shape (404 PROCESS_NOT_FOUND), and an unknown route 404', async () => {
    const missing = await fetch(`${base}/api/process/nope`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'PROCESS_NOT_FOUND', httpStatus: 404, context: { processId: 'nope' } });
    expect((await fetch(`${base}/api/unknown`)).status).toBe(404);
  });
});
