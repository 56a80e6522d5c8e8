import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { hostEnv, hostPaths, hostPort, type ContainerLayout } from './container-env.ts';
import { checkReady } from './port-watch.ts';
import { ProcessStore, type ProcessRecord } from './processes.ts';

/**
 * A double of the sandbox's control server (port 3000) for the calls this
 * project's Worker makes through @cloudflare/sandbox 0.12.10 with its default
 * `http` transport. Mirrors:
 *   - the SDK client in node_modules/@cloudflare/sandbox 0.12.10 (what it
 *     sends and which response fields it reads: ProcessClient, UtilityClient,
 *     PortClient, CommandClient, parseSSEStream, createErrorFromResponse);
 *   - cloudflare/sandbox-sdk `packages/sandbox-container` as of the
 *     @cloudflare/sandbox@0.12.7 tag, the newest source available here
 *     (routes/setup.ts, handlers/*, services/process-service.ts, session.ts).
 * Written from those, not copied. Anything else answers 404 UNKNOWN_ERROR,
 * so a new SDK call shows up as a failing test, not a silent success.
 */
export const MIRRORS_SDK_VERSION = '0.12.10';

interface Session {
  env: Record<string, string>;
  cwd: string;
}

interface ServerContext {
  layout: ContainerLayout;
  /** What every process inherits: the container's own environment (the image's ENV). */
  baseEnv: Record<string, string>;
  sessions: Map<string, Session>;
  processes: ProcessStore;
}

type Json = Record<string, unknown>;

const now = () => new Date().toISOString();

/** The SDK's ErrorResponse: createErrorFromResponse switches on `code` and reads `context`. */
class ControlError extends Error {
  readonly httpStatus: number;
  readonly code: string;
  readonly context: Json;
  constructor(httpStatus: number, code: string, message: string, context: Json = {}) {
    super(message);
    this.httpStatus = httpStatus;
    this.code = code;
    this.context = context;
  }
}

function send(res: ServerResponse, status: number, body: Json): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<Json> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (text === '') return {};
  const value: unknown = JSON.parse(text);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new ControlError(400, 'VALIDATION_FAILED', 'Request body must be a JSON object');
  return value as Json;
}

function stringRecord(value: unknown, field: string): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null) throw new ControlError(400, 'VALIDATION_FAILED', `${field} must be an object`);
  const out: Record<string, string> = {};
  for (const [name, entry] of Object.entries(value)) {
    // session.ts buildScopedEnvBlocks: a bad name fails the command; undefined/null values are skipped.
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new ControlError(500, 'STREAM_START_ERROR', `Invalid environment variable name: ${name}`);
    if (typeof entry === 'string') out[name] = entry;
  }
  return out;
}

function optionalString(value: unknown, field: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw new ControlError(400, 'VALIDATION_FAILED', `${field} must be a string`);
  return value;
}

function requireString(value: unknown, field: string): string {
  const text = optionalString(value, field);
  if (text === undefined || text.trim() === '') throw new ControlError(400, 'INVALID_COMMAND', `${field} is required`);
  return text;
}

function processView(record: ProcessRecord): Json {
  return {
    id: record.id,
    pid: record.pid,
    command: record.command,
    status: record.status,
    startTime: record.startTime.toISOString(),
    endTime: record.endTime?.toISOString(),
    exitCode: record.exitCode,
  };
}

function notFound(id: string): ControlError {
  return new ControlError(404, 'PROCESS_NOT_FOUND', `Process ${id} not found`, { processId: id });
}

/** A session is created on first use, as SessionManager does for an unknown id. */
function sessionFor(ctx: ServerContext, id: string | undefined): Session {
  const key = id ?? 'default';
  let session = ctx.sessions.get(key);
  if (!session) {
    session = { env: {}, cwd: '/workspace' };
    ctx.sessions.set(key, session);
  }
  return session;
}

/** What a command sees: the container's env, then its session's exports, then its own (scoped to it). */
function spawnSpec(ctx: ServerContext, command: string, session: Session, env: Record<string, string>, cwd: string | undefined) {
  return {
    command,
    hostCommand: hostPaths(ctx.layout, command),
    cwd: hostPaths(ctx.layout, cwd ?? session.cwd),
    env: hostEnv(ctx.layout, { ...ctx.baseEnv, ...session.env, ...env }),
  };
}

let generated = 0;

function startProcess(ctx: ServerContext, body: Json): ProcessRecord {
  const command = requireString(body.command, 'command');
  const session = sessionFor(ctx, optionalString(body.sessionId, 'sessionId'));
  const id = optionalString(body.processId, 'processId') ?? `proc_${Date.now()}_${(generated++).toString(36)}`;
  return ctx.processes.start(id, spawnSpec(ctx, command, session, stringRecord(body.env, 'env'), optionalString(body.cwd, 'cwd')));
}

function execute(ctx: ServerContext, body: Json): Promise<Json> {
  const command = requireString(body.command, 'command');
  const session = sessionFor(ctx, optionalString(body.sessionId, 'sessionId'));
  const spec = spawnSpec(ctx, command, session, stringRecord(body.env, 'env'), optionalString(body.cwd, 'cwd'));
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('/bin/bash', ['-c', spec.hostCommand], { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (code, signal) => {
      const exitCode = code ?? (signal === 'SIGKILL' ? 137 : 143);
      resolve({ success: exitCode === 0, exitCode, stdout, stderr, command, duration: Date.now() - started, timestamp: now() });
    });
  });
}

function sse(res: ServerResponse): (event: Json) => void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  return (event) => res.write(`data: ${JSON.stringify(event)}\n\n`);
}

const TERMINAL = new Set(['completed', 'failed', 'killed', 'error']);

/** handlers/port-handler.ts: watching, then ready / process_exited / error, polling every `interval` (100 ms–10 s). */
async function portWatch(ctx: ServerContext, body: Json, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const port = Number(body.port);
  const interval = Math.max(100, Math.min(typeof body.interval === 'number' ? body.interval : 500, 10_000));
  const processId = optionalString(body.processId, 'processId');
  const check = {
    port: hostPort(ctx.layout, port),
    mode: body.mode === 'tcp' ? ('tcp' as const) : ('http' as const),
    path: optionalString(body.path, 'path') ?? '/',
    statusMin: typeof body.statusMin === 'number' ? body.statusMin : 200,
    statusMax: typeof body.statusMax === 'number' ? body.statusMax : 399,
  };
  let cancelled = false;
  req.on('close', () => (cancelled = true));
  res.on('close', () => (cancelled = true));
  const emit = sse(res);
  emit({ type: 'watching', port });
  while (!cancelled) {
    if (processId !== undefined) {
      const record = ctx.processes.get(processId);
      if (!record) {
        emit({ type: 'error', port, error: 'Process not found' });
        break;
      }
      if (TERMINAL.has(record.status)) {
        emit({ type: 'process_exited', port, exitCode: record.exitCode });
        break;
      }
    }
    const result = await checkReady(check);
    if (result.ready) {
      emit({ type: 'ready', port, statusCode: result.statusCode });
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
  res.end();
}

/** handlers/process-handler.ts handleStream: process_info, buffered output, live output, exit. */
function processStream(record: ProcessRecord, res: ServerResponse): void {
  const emit = sse(res);
  const base = { processId: record.id };
  emit({ type: 'process_info', ...base, command: record.command, status: record.status, timestamp: now() });
  const exit = () => {
    emit({ type: 'exit', ...base, exitCode: record.exitCode, data: `Process ${record.status} with exit code ${record.exitCode}`, timestamp: now() });
    record.listeners.delete(listener);
    res.end();
  };
  const listener = (event: { type: 'stdout' | 'stderr' | 'exit'; data?: string }) => {
    if (event.type === 'exit') exit();
    else emit({ type: event.type, data: event.data, ...base, timestamp: now() });
  };
  record.listeners.add(listener);
  res.on('close', () => record.listeners.delete(listener));
  if (record.stdout) emit({ type: 'stdout', data: record.stdout, ...base, timestamp: now() });
  if (record.stderr) emit({ type: 'stderr', data: record.stderr, ...base, timestamp: now() });
  if (record.endTime !== undefined) exit();
}

async function route(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://control');
  const method = req.method ?? 'GET';
  const path = url.pathname;
  if (method === 'GET' && path === '/') {
    // The containers library's readiness ping: any answer means "listening".
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`control-server double for @cloudflare/sandbox ${MIRRORS_SDK_VERSION}`);
    return;
  }
  if (method === 'GET' && (path === '/api/ping' || path === '/api/health')) return send(res, 200, { success: true, status: 'healthy', timestamp: now() });
  if (method === 'GET' && path === '/api/version') return send(res, 200, { success: true, version: ctx.baseEnv.SANDBOX_VERSION ?? 'unknown', timestamp: now() });
  if (method === 'POST' && path === '/api/session/create') {
    const body = await readBody(req);
    const id = optionalString(body.id, 'id') ?? `session_${Date.now()}`;
    if (ctx.sessions.has(id)) {
      throw new ControlError(409, 'SESSION_ALREADY_EXISTS', `Session '${id}' already exists`, { sessionId: id, containerPlacementId: null });
    }
    const session = { env: stringRecord(body.env, 'env'), cwd: optionalString(body.cwd, 'cwd') ?? '/workspace' };
    ctx.sessions.set(id, session);
    return send(res, 200, { success: true, data: { id, ...session }, containerPlacementId: null, timestamp: now() });
  }
  if (method === 'POST' && path === '/api/execute') {
    const body = await readBody(req);
    if (body.background === true) {
      const record = startProcess(ctx, body);
      return send(res, 200, { success: true, processId: record.id, pid: record.pid, command: record.command, timestamp: now() });
    }
    return send(res, 200, await execute(ctx, body));
  }
  if (method === 'POST' && path === '/api/process/start') {
    const record = startProcess(ctx, await readBody(req));
    return send(res, 200, { success: true, processId: record.id, pid: record.pid, command: record.command, timestamp: now() });
  }
  if (method === 'POST' && path === '/api/port-watch') return portWatch(ctx, await readBody(req), req, res);
  if (method === 'GET' && path === '/api/process/list') {
    return send(res, 200, { success: true, processes: ctx.processes.list().map(processView), timestamp: now() });
  }
  if (method === 'DELETE' && path === '/api/process/kill-all') {
    return send(res, 200, { success: true, cleanedCount: await ctx.processes.killAll(), timestamp: now() });
  }
  const match = /^\/api\/process\/([^/]+)(?:\/(logs|stream))?$/.exec(path);
  if (match) {
    const id = decodeURIComponent(match[1]!);
    const record = ctx.processes.get(id);
    if (!record) throw notFound(id);
    if (method === 'GET' && match[2] === undefined) return send(res, 200, { success: true, process: processView(record), timestamp: now() });
    if (method === 'DELETE' && match[2] === undefined) {
      await ctx.processes.kill(record);
      return send(res, 200, { success: true, processId: id, timestamp: now() });
    }
    if (method === 'GET' && match[2] === 'logs') return send(res, 200, { success: true, processId: id, stdout: record.stdout, stderr: record.stderr, timestamp: now() });
    if (method === 'GET' && match[2] === 'stream') return processStream(record, res);
  }
  throw new ControlError(404, 'UNKNOWN_ERROR', `The control-server double does not implement ${method} ${path}`);
}

export function createControlServer(layout: ContainerLayout, baseEnv: Record<string, string>): { server: Server; processes: ProcessStore } {
  const ctx: ServerContext = { layout, baseEnv, sessions: new Map(), processes: new ProcessStore() };
  const server = createServer((req, res) => {
    route(ctx, req, res).catch((error: unknown) => {
      const failure = error instanceof ControlError ? error : new ControlError(500, 'INTERNAL_ERROR', error instanceof Error ? error.message : String(error));
      if (res.headersSent) {
        res.destroy();
        return;
      }
      send(res, failure.httpStatus, { code: failure.code, message: failure.message, context: failure.context, httpStatus: failure.httpStatus, timestamp: now() });
    });
  });
  return { server, processes: ctx.processes };
}
