import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  ProtocolError,
  RUNNER_RUN_STATE_HEADER,
  UnknownHarnessError,
  parseRunnerRunRequest,
  parseSeqCursor,
  parseToolResult,
  type RunnerHealth,
  type RunnerRunRequest,
  type RunnerToolResultAnswer,
} from '../../src/protocol/index.ts';
import { availableHarnesses, checkHarness, runnerHealth } from './availability.ts';
import { readRunnerConfig, type RunnerConfig } from './config.ts';
import { HttpError, readJsonBody, sendError, sendJson, startNdjson } from './http-util.ts';
import { createRedactor, type Redactor } from './redact.ts';
import { RunRegistry } from './run-registry.ts';
import { requireRunnerToken, runnerGate } from './runner-auth.ts';
import { defaultWorkspaceRoot, workspaceDir } from './workspace.ts';

/** A run request carries the thread's transcript; far above any real one, far below memory trouble. */
const MAX_RUN_REQUEST_BYTES = 16 * 1024 * 1024;

/**
 * A tool result's output becomes part of one chunk, which is at most
 * RUNNER_MAX_LINE_BYTES (1 MiB); twice that leaves room for JSON escaping.
 */
const MAX_TOOL_RESULT_BYTES = 2 * 1024 * 1024;

/** Same alphabet and length as `parseRunnerRunRequest` accepts for `runId`. */
const RUN_PATH = /^\/runs\/([A-Za-z0-9_-]{1,128})(\/stream|\/cancel|\/tool-results)?$/;

export interface RunnerOptions {
  port?: number;
  host?: string;
  /** Defaults to `process.env`: availability checks and every harness process use it. */
  env?: Record<string, string | undefined>;
  /** Overrides of what `RUNNER_*` variables in `env` say. */
  config?: Partial<RunnerConfig>;
  /** Where runner log lines go (already redacted). Default: stderr. */
  log?: (line: string) => void;
}

export interface RunningRunner {
  url: string;
  port: number;
  host: string;
  /** What `GET /health` lists right now. */
  harnesses(): string[];
  /** Stops every harness process, cuts open streams and closes the server. */
  close(): Promise<void>;
}

interface Context {
  config: RunnerConfig;
  env: Record<string, string | undefined>;
  registry: RunRegistry;
  redact: Redactor;
  /** Throws the 401/403/415 a request gets before any route sees it. */
  gate: (req: IncomingMessage, path: string) => void;
}

function toHttpError(error: unknown, redact: Redactor): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof UnknownHarnessError) return new HttpError(400, 'unknown_harness', error.message);
  if (error instanceof ProtocolError) return new HttpError(400, 'invalid_body', error.message);
  const message = error instanceof Error ? error.message : String(error);
  return new HttpError(500, 'internal_error', redact(`The runner failed: ${message}`));
}

/** CLI harnesses work in a directory per tenant and thread, so a thread's turns share files and tenants share none. */
function workspaceFor(request: RunnerRunRequest, config: RunnerConfig): string | undefined {
  if (request.harness === 'demo') return undefined;
  return workspaceDir(config.workspaceRoot ?? defaultWorkspaceRoot(), request.tenant, request.threadId);
}

async function onStartRun(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const request = parseRunnerRunRequest(await readJsonBody(req, MAX_RUN_REQUEST_BYTES));
  if (ctx.registry.has(request.runId)) {
    throw new HttpError(409, 'run_exists', `Run ${request.runId} is already known to this runner; reattach with GET /runs/${request.runId}/stream.`);
  }
  const availability = checkHarness(request.harness, ctx.env, request);
  if (!availability.ok) throw new HttpError(400, 'harness_unavailable', availability.reason);
  const run = ctx.registry.start(request, workspaceFor(request, ctx.config));
  startNdjson(res, { [RUNNER_RUN_STATE_HEADER]: run.spool.state });
  run.spool.subscribe(res, -1);
}

function onStream(ctx: Context, runId: string, url: URL, res: ServerResponse): void {
  const fromSeq = parseSeqCursor(url.searchParams.get('fromSeq'));
  if (fromSeq === null) throw new HttpError(400, 'invalid_from_seq', 'fromSeq must be an integer >= -1 (the last seq you have; -1 for everything).');
  const run = ctx.registry.get(runId);
  if (run === undefined) throw new HttpError(404, 'run_not_found', `This runner does not know run ${runId} (never started here, or its lines have expired).`);
  if (fromSeq + 1 < run.spool.firstSeq) {
    throw new HttpError(410, 'spool_truncated', `Run ${runId} kept only its lines from seq ${run.spool.firstSeq} on (RUNNER_SPOOL_MAX_BYTES); seq ${fromSeq + 1} is gone.`);
  }
  startNdjson(res, { [RUNNER_RUN_STATE_HEADER]: run.spool.state });
  run.spool.subscribe(res, fromSeq);
}

/**
 * The run object's answer to a host tool call the harness asked for (its
 * `tool-input-available` chunk), passed on to the harness process. The first
 * answer for a call wins; a repeat answers `delivered: false` and goes nowhere.
 */
async function onToolResult(ctx: Context, runId: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const run = ctx.registry.get(runId);
  if (run === undefined) throw new HttpError(404, 'run_not_found', `This runner does not know run ${runId}.`);
  const result = parseToolResult(await readJsonBody(req, MAX_TOOL_RESULT_BYTES));
  const delivery = ctx.registry.deliverToolResult(run, result);
  if (delivery === 'run_ended') {
    throw new HttpError(409, 'run_ended', `Run ${runId} has ended (${run.spool.state}); its harness takes no more tool results.`);
  }
  const body: RunnerToolResultAnswer = { delivered: delivery === 'delivered' };
  sendJson(res, 200, body);
}

async function route(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://runner');
  const method = req.method ?? 'GET';
  ctx.gate(req, url.pathname);
  if (url.pathname === '/health' && method === 'GET') {
    const body: RunnerHealth = runnerHealth(ctx.env);
    return sendJson(res, 200, body);
  }
  if (url.pathname === '/run' && method === 'POST') return onStartRun(ctx, req, res);
  const match = RUN_PATH.exec(url.pathname);
  if (match === null) throw new HttpError(404, 'not_found', `No route for ${method} ${url.pathname}.`);
  const runId = match[1]!;
  const action = match[2];
  if (action === '/stream' && method === 'GET') return onStream(ctx, runId, url, res);
  if (action === '/tool-results' && method === 'POST') return onToolResult(ctx, runId, req, res);
  const run = ctx.registry.get(runId);
  if ((action === '/cancel' && method === 'POST') || (action === undefined && method === 'GET')) {
    if (run === undefined) throw new HttpError(404, 'run_not_found', `This runner does not know run ${runId}.`);
    if (action === '/cancel') await ctx.registry.cancel(run);
    return sendJson(res, 200, ctx.registry.status(run));
  }
  throw new HttpError(404, 'not_found', `No route for ${method} ${url.pathname}.`);
}

/** Rejects, naming RUNNER_TOKEN, when no token is configured (in `env` or `options.config.token`). */
export async function startRunner(options: RunnerOptions = {}): Promise<RunningRunner> {
  const env = options.env ?? process.env;
  const config: RunnerConfig = { ...readRunnerConfig(env), ...options.config };
  const gate = runnerGate(requireRunnerToken(config.token));
  if (options.port !== undefined) config.port = options.port;
  if (options.host !== undefined) config.host = options.host;
  const redact = createRedactor(env);
  const write = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (line: string): void => write(redact(line));
  const registry = new RunRegistry({ config, env, redact, log });
  const ctx: Context = { config, env, registry, redact, gate };

  const server = createServer((req, res) => {
    route(ctx, req, res).catch((error: unknown) => {
      const httpError = toHttpError(error, redact);
      if (httpError.status >= 500) log(`${req.method} ${req.url}: ${httpError.message}`);
      sendError(res, httpError);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const hostForUrl = config.host.includes(':') ? `[${config.host}]` : config.host;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${hostForUrl}:${port}`,
    port,
    host: config.host,
    harnesses: () => availableHarnesses(env),
    close: () =>
      (closing ??= (async () => {
        await registry.closeAll();
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeAllConnections();
        });
      })()),
  };
}
