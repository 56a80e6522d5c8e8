import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { startRunner, type RunningRunner } from '../src/server.ts';
import type { RunnerConfig } from '../src/config.ts';

export type Chunk = { type: string } & Record<string, unknown>;

/** The test process's environment without any credential, so availability is decided by each test alone. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/(?:KEY|TOKEN|SECRET)$/i.test(name) || name === 'NODE_OPTIONS') continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

/** The token every test runner is started with; `json` and `stream` send it unless told otherwise. */
export const TEST_RUNNER_TOKEN = 'test-runner-token-5d0c2e7a91b4';

export interface TestRunner extends RunningRunner {
  logs: string[];
}

export async function startTestRunner(options: { env?: Record<string, string | undefined>; config?: Partial<RunnerConfig> } = {}): Promise<TestRunner> {
  const logs: string[] = [];
  const runner = await startRunner({
    port: 0,
    host: '127.0.0.1',
    env: options.env ?? cleanEnv(),
    config: { keepAliveMs: 50, killGraceMs: 2_000, token: TEST_RUNNER_TOKEN, ...options.config },
    log: (line) => logs.push(line),
  });
  return Object.assign(runner, { logs });
}

/** The fake `claude` CLI (fixtures/claude) the claude-code harness finds first on this PATH. */
export const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));
export const PATH_WITH_FIXTURES = `${FIXTURES}${delimiter}${process.env.PATH ?? ''}`;

export interface CliRunner extends TestRunner {
  /** RUNNER_WORKSPACE_ROOT: a scratch directory, removed by `close()`. */
  workspaceRoot: string;
}

/** A runner for the claude-code harness with the fake CLI on PATH and its workspaces in a scratch root. */
export async function startCliRunner(label: string, env: Record<string, string>): Promise<CliRunner> {
  chmodSync(join(FIXTURES, 'claude'), 0o755);
  const workspaceRoot = mkdtempSync(join(tmpdir(), `relay-${label}-`));
  const runner = await startTestRunner({ env: cleanEnv({ ...env, PATH: PATH_WITH_FIXTURES, RUNNER_WORKSPACE_ROOT: workspaceRoot }) });
  const close = runner.close;
  return Object.assign(runner, {
    workspaceRoot,
    close: async () => {
      await close();
      rmSync(workspaceRoot, { recursive: true, force: true });
    },
  });
}

let nextRun = 0;
export function runId(label = 'run'): string {
  return `${label}_${process.pid}_${nextRun++}`;
}

export function runBody(id: string, fields: Record<string, unknown> = {}): Record<string, unknown> {
  return { runId: id, threadId: 'thread_1', tenant: null, harness: 'demo', messages: [{ role: 'user', content: 'count these words please' }], ...fields };
}

export type StreamEvent = { kind: 'chunk'; chunk: Chunk } | { kind: 'blank' } | { kind: 'end' } | { kind: 'cut' };

/** An NDJSON answer read event by event; tells a clean end from a cut connection. */
export class NdjsonStream {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly #res: IncomingMessage;
  readonly #events: StreamEvent[] = [];
  #wake: (() => void) | undefined;
  #buffer = '';

  constructor(res: IncomingMessage) {
    this.status = res.statusCode ?? 0;
    this.headers = res.headers;
    this.#res = res;
    res.setEncoding('utf8');
    res.on('data', (data: string) => {
      this.#buffer += data;
      let newline: number;
      while ((newline = this.#buffer.indexOf('\n')) !== -1) {
        const line = this.#buffer.slice(0, newline);
        this.#buffer = this.#buffer.slice(newline + 1);
        this.#push(line === '' ? { kind: 'blank' } : { kind: 'chunk', chunk: JSON.parse(line) as Chunk });
      }
    });
    res.on('end', () => this.#push({ kind: 'end' }));
    res.on('aborted', () => this.#push({ kind: 'cut' }));
    res.on('error', () => this.#push({ kind: 'cut' }));
  }

  #push(event: StreamEvent): void {
    const last = this.#events.at(-1);
    if (last?.kind === 'end' || last?.kind === 'cut') return;
    this.#events.push(event);
    this.#wake?.();
  }

  async next(): Promise<StreamEvent> {
    while (this.#events.length === 0) await new Promise<void>((resolve) => (this.#wake = resolve));
    const event = this.#events[0]!;
    if (event.kind !== 'end' && event.kind !== 'cut') this.#events.shift();
    return event;
  }

  /** Reads exactly `count` chunks (blank lines skipped); fails if the stream ends first. */
  async chunks(count: number): Promise<Chunk[]> {
    const chunks: Chunk[] = [];
    while (chunks.length < count) {
      const event = await this.next();
      if (event.kind === 'chunk') chunks.push(event.chunk);
      else if (event.kind !== 'blank') throw new Error(`stream ended (${event.kind}) after ${chunks.length} of ${count} chunks`);
    }
    return chunks;
  }

  async rest(): Promise<{ chunks: Chunk[]; blanks: number; end: 'end' | 'cut' }> {
    const chunks: Chunk[] = [];
    let blanks = 0;
    for (;;) {
      const event = await this.next();
      if (event.kind === 'chunk') chunks.push(event.chunk);
      else if (event.kind === 'blank') blanks++;
      else return { chunks, blanks, end: event.kind };
    }
  }

  close(): void {
    this.#res.destroy();
  }
}

export interface JsonAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * Request headers: the runner token and, with a body, the JSON type are sent
 * by default; a header set to `null` here is left out.
 */
export type Headers = Record<string, string | null>;

function send(url: string, method: string, body: string | Buffer | undefined, extra: Headers = {}): Promise<IncomingMessage> {
  const headers: Record<string, string> = {};
  const wanted: Headers = { authorization: `Bearer ${TEST_RUNNER_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...extra };
  for (const [name, value] of Object.entries(wanted)) if (value !== null) headers[name] = value;
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method, headers }, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

async function readJson(res: IncomingMessage): Promise<JsonAnswer> {
  let text = '';
  res.setEncoding('utf8');
  for await (const part of res) text += part;
  return { status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as unknown };
}

/** A request whose answer is JSON (errors, status, health). */
export async function json(url: string, method = 'GET', body?: unknown, headers?: Headers): Promise<JsonAnswer> {
  const raw = body === undefined ? undefined : typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return readJson(await send(url, method, raw, headers));
}

/** A request whose answer must be an NDJSON stream. */
export async function stream(url: string, method = 'GET', body?: unknown, headers?: Headers): Promise<NdjsonStream> {
  const res = await send(url, method, body === undefined ? undefined : JSON.stringify(body), headers);
  if (res.statusCode !== 200) throw new Error(`expected a stream, got ${res.statusCode}: ${JSON.stringify((await readJson(res)).body)}`);
  return new NdjsonStream(res);
}

export function withoutTimestamps(chunks: readonly Chunk[]): Chunk[] {
  return chunks.map(({ timestamp: _timestamp, ...rest }) => rest as Chunk);
}

/** Gone, or a zombie nobody has reaped yet: either way it no longer runs. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Polls a condition that becomes true on its own (a process exiting, a timer firing); no timing is asserted. */
export async function eventually(check: () => boolean | Promise<boolean>, what: string, limitMs = 10_000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`still waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
