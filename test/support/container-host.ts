import { spawn, type ChildProcess } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { descendants } from './control-server-double/processes.ts';

/**
 * The "platform" side of the container stand-in: workerd cannot start
 * processes, so the stand-in for `ctx.container` (test/sandbox/
 * container-standin.ts) asks this loopback service to. Each container is a
 * process group led by the control-server double, with its own free
 * loopback ports for container ports 3000 and 8788 and its own scratch
 * `/workspace`, deleted when it exits: a container that slept comes back
 * empty. Every process of a container carries a marker variable, so its end
 * takes everything it started, detached harness groups included — a real
 * container's end is its VM's.
 *
 * It also plays the platform's admission: `max_instances` (a start beyond it
 * is refused with the platform's "no container instance" error) and its start
 * rate limit, both set by tests through `PUT /platform`.
 */
const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const DOUBLE = join(REPO, 'test/support/control-server-double/main.ts');
const MARKER = 'HARNESS_RELAY_TEST_CONTAINER';
/** The image's layout (container/Dockerfile): the repository is what it copies to /opt/harness-relay. */
const IMAGE_ROOT = '/opt/harness-relay';
const PUBLISHED_PORTS = [3000, 8788] as const;
/** The base image (docker.io/cloudflare/sandbox:<version>) sets it; the SDK's version check reads it. */
const SANDBOX_IMAGE_VERSION = '0.12.10';

interface Instance {
  id: string;
  key: string;
  child: ChildProcess;
  ports: Record<string, number>;
  workspace: string;
  exit: Promise<number>;
  exitCode: number | undefined;
}

export interface ContainerHost {
  url: string;
  close(): Promise<void>;
}

/** `ENV A=1 B=2` instructions of the Dockerfile the deploy builds, so the stand-in's env is the image's. */
function imageEnv(dockerfile = readFileSync(join(REPO, 'container/Dockerfile'), 'utf8')): Record<string, string> {
  const env: Record<string, string> = {};
  const joined = dockerfile.replace(/\\\r?\n/g, ' ');
  for (const line of joined.split(/\r?\n/)) {
    const match = /^\s*ENV\s+(.*)$/i.exec(line);
    if (!match) continue;
    for (const pair of match[1]!.trim().split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1).replace(/^"(.*)"$/, '$1');
    }
  }
  return env;
}

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise((done) => server.close(done));
  return port;
}

/**
 * A container's processes: everything below its entrypoint, and anything
 * carrying its marker that was orphaned (re-parented) on the way. */
function members(instance: Instance): number[] {
  return [...new Set([...(instance.child.pid === undefined ? [] : descendants(instance.child.pid)), ...marked(instance.id)])];
}

/** Processes whose environment carries this container's marker (found through /proc). */
function marked(instance: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0').includes(`${MARKER}=${instance}`)) pids.push(Number(entry));
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

function describeProcess(pid: number): { pid: number; ppid: number; pgid: number; cmdline: string } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z') return null;
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return { pid, ppid: Number(fields[1]), pgid: Number(fields[2]), cmdline };
  } catch {
    return null;
  }
}

function killAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
}

function send(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

export async function startContainerHost(): Promise<ContainerHost> {
  const instances = new Map<string, Instance>();
  const platform: { maxInstances: number | null; refuse: 'rate_limited' | null } = { maxInstances: null, refuse: null };
  const baseEnv = imageEnv();
  let counter = 0;

  async function launch(key: string, startEnv: Record<string, string>): Promise<Instance> {
    const id = `c${++counter}`;
    const ports: Record<string, number> = {};
    for (const port of PUBLISHED_PORTS) ports[port] = await freePort();
    const workspace = mkdtempSync(join(tmpdir(), `sandbox-${id}-workspace-`));
    const env: Record<string, string> = {
      // The image has Node 22 on PATH (the runner needs type stripping); this one runs the tests.
      PATH: [dirname(process.execPath), process.env.PATH ?? '/usr/bin:/bin'].join(delimiter),
      HOME: workspace,
      SANDBOX_VERSION: SANDBOX_IMAGE_VERSION,
      ...baseEnv,
      // What the Worker started the container with (the SDK's envVars): the whole container sees it.
      ...startEnv,
      [MARKER]: id,
      CONTAINER_PORT_MAP: JSON.stringify(ports),
      CONTAINER_PATH_MAP: JSON.stringify({ [IMAGE_ROOT]: REPO, '/workspace': workspace }),
    };
    const child = spawn(process.execPath, [DOUBLE], { cwd: workspace, env, detached: true, stdio: ['ignore', 'ignore', 'inherit'] });
    const instance: Instance = { id, key, child, ports, workspace, exitCode: undefined, exit: Promise.resolve(0) };
    instance.exit = new Promise((done) => {
      child.once('exit', (code, signal) => {
        // The container's end is everything's end: what it started, and its disk.
        killAll(members(instance), 'SIGKILL');
        rmSync(workspace, { recursive: true, force: true });
        instances.delete(id);
        instance.exitCode = code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 0);
        done(instance.exitCode);
      });
    });
    instances.set(id, instance);
    return instance;
  }

  /**
   * A connection to a container port, made here so that a port nothing
   * listens on is an answer (`x-container-standin: not-listening`) the
   * stand-in turns into the platform's error, not a failed fetch in workerd.
   * A connection that drops mid-body drops the answer too.
   */
  function proxy(instance: Instance | undefined, port: number, path: string, req: IncomingMessage, res: ServerResponse): void {
    const target = instance?.ports[String(port)];
    if (instance === undefined || target === undefined || instance.exitCode !== undefined) {
      res.writeHead(502, { 'x-container-standin': instance === undefined || instance.exitCode !== undefined ? 'not-running' : 'not-listening' });
      res.end();
      return;
    }
    const upstream = httpRequest({ host: '127.0.0.1', port: target, method: req.method, path, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
      answer.on('error', () => res.destroy());
      answer.on('aborted', () => res.destroy());
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'x-container-standin': error.code === 'ECONNREFUSED' ? 'not-listening' : 'connection-lost' });
        res.end();
      } else res.destroy();
    });
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://host');
    const method = req.method ?? 'GET';
    if (method === 'PUT' && url.pathname === '/platform') {
      const settings = await body(req);
      platform.maxInstances = typeof settings.maxInstances === 'number' ? settings.maxInstances : null;
      platform.refuse = settings.refuse === 'rate_limited' ? 'rate_limited' : null;
      return send(res, 200, platform);
    }
    if (method === 'GET' && url.pathname === '/instances') {
      const key = url.searchParams.get('key');
      const list = [...instances.values()].filter((instance) => key === null || instance.key === key);
      return send(res, 200, list.map(({ id, key: owner, ports, child }) => ({ instance: id, key: owner, ports, pid: child.pid })));
    }
    if (method === 'POST' && url.pathname === '/instances') {
      const { key, env: startEnv } = await body(req);
      if (typeof key !== 'string') return send(res, 400, { error: 'key is required' });
      const containerEnv: Record<string, string> = {};
      for (const [name, value] of Object.entries(typeof startEnv === 'object' && startEnv !== null ? startEnv : {})) {
        if (typeof value === 'string') containerEnv[name] = value;
      }
      if (platform.refuse === 'rate_limited') return send(res, 429, { refusal: 'rate_limited' });
      if (platform.maxInstances !== null && instances.size >= platform.maxInstances) return send(res, 503, { refusal: 'no_instance' });
      const instance = await launch(key, containerEnv);
      return send(res, 201, { instance: instance.id, ports: instance.ports });
    }
    const port = /^\/instances\/(c\d+)\/port\/(\d+)(\/.*)$/.exec(url.pathname);
    if (port) return proxy(instances.get(port[1]!), Number(port[2]), `${port[3]}${url.search}`, req, res);
    const match = /^\/instances\/(c\d+)(?:\/(exit|signal|processes))?$/.exec(url.pathname);
    const instance = match ? instances.get(match[1]!) : undefined;
    if (match && match[2] === 'exit' && method === 'GET') {
      // Long poll: answers when the container has exited (at once if it already has).
      if (!instance) return send(res, 200, { exitCode: 0, gone: true });
      return send(res, 200, { exitCode: await instance.exit });
    }
    if (!instance) return send(res, 404, { error: 'no such container' });
    if (match![2] === 'signal' && method === 'POST') {
      const { signal } = await body(req);
      // The platform signals the container's init; SIGKILL ends the VM outright.
      if (signal === 9) killAll([instance.child.pid!, ...members(instance)], 'SIGKILL');
      else killAll([instance.child.pid!], signal === 2 ? 'SIGINT' : 'SIGTERM');
      return send(res, 202, { signalled: signal });
    }
    if (match![2] === 'processes' && method === 'GET') {
      return send(res, 200, members(instance).map(describeProcess).filter((entry) => entry !== null));
    }
    if (match![2] === undefined && method === 'DELETE') {
      killAll([instance.child.pid!, ...members(instance)], 'SIGKILL');
      return send(res, 200, { exitCode: await instance.exit });
    }
    return send(res, 404, { error: `no route ${method} ${url.pathname}` });
  }

  const server: Server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => send(res, 500, { error: String(error) }));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      const live = [...instances.values()];
      for (const instance of live) killAll([instance.child.pid!, ...members(instance)], 'SIGKILL');
      await Promise.all(live.map((instance) => instance.exit));
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
