import { getSandbox, type Process } from '@cloudflare/sandbox';
import type { RunnerRunRequest, ToolResult } from '../protocol/index.ts';
import { admitContainer } from './container-admission.ts';
import type { Sandbox } from './sandbox-object.ts';
import { toolResultBody, type RunnerTransport } from './transport.ts';

/**
 * The runner inside a Cloudflare container, driven through `@cloudflare/sandbox`
 * 0.12.x (deploys; `RUNNER_URL` unset). Only usable where containers exist:
 * under `wrangler dev` without Docker and in tests, touching the Sandbox class
 * throws "Containers have not been enabled" (TOOLCHAIN.md).
 *
 * The runner is reached with `sandbox.containerFetch(request, runnerPort)`: that
 * goes straight to the container's TCP port (`ctx.container.getTcpPort`), so
 * neither `exposePort` (public preview URLs) nor `proxyToSandbox` is involved.
 * The SDK's own OpenCode integration does the same: `startProcess` +
 * `waitForPort`, then `containerFetch(request, port)` (dist/opencode/index.js).
 */
export interface SandboxTransportOptions {
  /**
   * The sandbox (one container, one runner) that holds a run. `getSandbox`
   * rejects ids outside 1–63 chars or with a leading/trailing `-`, and warns on
   * uppercase. `threadId` is only known at `start()` (and remembered for this
   * transport's lifetime): after an object restart `reattach`/`cancel` get
   * `undefined`, so the function must then find the thread itself.
   */
  sandboxId: (runId: string, threadId?: string) => string;
  /** The port the runner listens on in the container (SPEC default 8788). Must not be 3000: the SDK's control server. */
  runnerPort: number;
  /** Starts the runner, e.g. `node /runner/src/main.ts`. Logged by the SDK: never put a secret in it. */
  runnerCommand: string;
  /** Harness secrets (ANTHROPIC_API_KEY…), only those set. They reach the runner process's environment and nowhere else. */
  env: Record<string, string>;
  /**
   * The runner token of a sandbox (`runner-token.ts`): given to the runner it
   * starts there as RUNNER_TOKEN, and sent on every request to it but the
   * `/health` probe. Must answer the same for the same id in any incarnation.
   */
  runnerToken: (sandboxId: string) => Promise<string>;
  /** Bound on the runner answering `GET /health` once started. Default 60 s. */
  readyTimeoutMs?: number;
  /** Idle time before the container sleeps (and forgets every run). SDK default "10m"; an open stream counts as activity. */
  sleepAfter?: string | number;
}

/** Fixed, so any incarnation of the run object finds the runner an earlier one started. */
export const RUNNER_PROCESS_ID = 'harness-runner';
const DEFAULT_READY_TIMEOUT_MS = 60_000;
const PROBE_TIMEOUT_MS = 5_000;
const CANCEL_TIMEOUT_MS = 15_000;

export function sandboxTransport(namespace: DurableObjectNamespace<Sandbox>, options: SandboxTransportOptions): RunnerTransport {
  const port = options.runnerPort;
  const command = options.runnerCommand;
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULT_READY_TIMEOUT_MS;
  // Per-process env (ProcessOptions.env): the SDK exports these inside the
  // backgrounded `{ …; command } &` group only (sandbox-container session.ts,
  // buildScopedEnvBlocks), so they neither persist in the shared shell session
  // nor travel with any runner request. Not `setEnvVars`: that keeps them in
  // the Sandbox object's memory and `export`s them into the default session,
  // visible to every later command. The runner binds 0.0.0.0 because
  // `getTcpPort` connects from outside the container's loopback (the SDK's
  // own control server listens on 0.0.0.0 too).
  const processEnv: Record<string, string> = { RUNNER_HOST: '0.0.0.0', RUNNER_PORT: String(port) };
  for (const [name, value] of Object.entries(options.env)) if (value) processEnv[name] = value;

  const threads = new Map<string, string>();
  const ensuring = new Map<string, Promise<void>>();

  function open(runId: string, threadId?: string): { id: string; sandbox: Sandbox } {
    const id = options.sandboxId(runId, threadId ?? threads.get(runId));
    const sandboxOptions = options.sleepAfter === undefined ? undefined : { sleepAfter: options.sleepAfter };
    return { id, sandbox: getSandbox(namespace, id, sandboxOptions) };
  }

  /** One readiness check per sandbox at a time; nothing cached, so a runner that died since is noticed. */
  function ready(id: string, sandbox: Sandbox): Promise<void> {
    let pending = ensuring.get(id);
    if (!pending) {
      pending = ensureRunner(id, sandbox).finally(() => ensuring.delete(id));
      ensuring.set(id, pending);
    }
    return pending;
  }

  async function ensureRunner(id: string, sandbox: Sandbox): Promise<void> {
    const where = `port ${port} of sandbox ${id} (command: ${command})`;
    let runner: Process | null;
    try {
      // A control-plane call first: it boots the container and waits for the
      // SDK's server on port 3000. `containerFetch(…, port)` on a cold
      // container would instead wait (up to 90 s) for the runner's port,
      // which nothing has opened yet (Sandbox.containerFetch →
      // startAndWaitForPorts({ ports: port })). A start the platform refuses
      // (max_instances) fails here, after the SDK's wait for an instance,
      // not after two more minutes of its retries.
      await admitContainer(sandbox, id);
      runner = await sandbox.getProcess(RUNNER_PROCESS_ID);
      if (!runner || !isLive(runner.status)) {
        // A runner started under a record another caller overwrote still answers.
        // No record at all means nothing was started under the id in this
        // container: no probe then (@cloudflare/containers logs an error for
        // every request to a port nothing listens on).
        if (runner && (await healthy(sandbox))) return;
        // The container's process store has no duplicate check on processId:
        // the probe above is what keeps this from starting a second runner.
        // The token travels like the secrets: in this one process's environment, never in the command or the session.
        const env = { ...processEnv, RUNNER_TOKEN: await options.runnerToken(id) };
        runner = await sandbox.startProcess(command, { processId: RUNNER_PROCESS_ID, env });
      }
    } catch (error) {
      throw new Error(`could not start the harness runner on ${where}: ${describe(error)}`);
    }
    try {
      // The SDK polls from inside the container and fails early if the process exits.
      const waiting = runner.waitForPort(port, { mode: 'http', path: '/health', status: 200, timeout: readyTimeoutMs });
      await withDeadline(waiting, readyTimeoutMs + PROBE_TIMEOUT_MS, 'readiness wait timed out');
    } catch (error) {
      // Lost a start race to a concurrent caller: ours exits (port in use), theirs answers.
      if (await healthy(sandbox)) return;
      throw new Error(
        `the harness runner did not answer GET /health on ${where} within ${Math.round(readyTimeoutMs / 1000)} s: ${describe(error)}. ` +
          `Its output: getProcessLogs('${RUNNER_PROCESS_ID}').`,
      );
    }
  }

  async function healthy(sandbox: Sandbox): Promise<boolean> {
    try {
      const response = await withDeadline(sandbox.containerFetch(runnerRequest('/health'), port), PROBE_TIMEOUT_MS, 'probe timed out');
      await response.body?.cancel();
      return response.status === 200;
    } catch {
      return false;
    }
  }

  function runnerRequest(path: string, init?: RequestInit): Request {
    // The host is ignored: containerFetch connects to the port and forwards the URL as is.
    return new Request(`http://localhost:${port}${path}`, init);
  }

  /** A runner route other than `/health`: it answers only with the sandbox's token. */
  async function authorizedRequest(id: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<Request> {
    const headers = { ...init.headers, authorization: `Bearer ${await options.runnerToken(id)}` };
    return runnerRequest(path, { ...init, headers });
  }

  /** The request itself. No AbortSignal crosses the RPC boundary; the caller's signal is honoured on this side. */
  async function send(id: string, sandbox: Sandbox, request: Request, signal?: AbortSignal): Promise<Response> {
    const pending = sandbox.containerFetch(request, port);
    const response = signal ? await abortable(pending, signal) : await pending;
    // Sandbox/Container.containerFetch answer failures to start or reach the
    // container as synthetic 500/503 (429 when starts are rate-limited)
    // instead of throwing. SPEC's runner answers only 200, 400 and 404.
    if (response.status >= 500 || response.status === 429) {
      const detail = (await response.text().catch(() => '')).replace(/\s+/g, ' ').slice(0, 300);
      throw new Error(`the harness runner on port ${port} of sandbox ${id} is unreachable (${response.status}${detail ? `: ${detail}` : ''})`);
    }
    return signal && response.body ? followAbort(response, signal) : response;
  }

  return {
    async start(request: RunnerRunRequest, signal?: AbortSignal) {
      signal?.throwIfAborted();
      threads.set(request.runId, request.threadId);
      const { id, sandbox } = open(request.runId, request.threadId);
      await ready(id, sandbox);
      signal?.throwIfAborted();
      const init = {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
        body: JSON.stringify(request),
      };
      return send(id, sandbox, await authorizedRequest(id, '/run', init), signal);
    },
    async reattach(runId: string, fromSeq: number, signal?: AbortSignal) {
      signal?.throwIfAborted();
      const { id, sandbox } = open(runId);
      // A slept container comes back empty: starting its runner answers the honest 404.
      await ready(id, sandbox);
      signal?.throwIfAborted();
      const path = `/runs/${encodeURIComponent(runId)}/stream?fromSeq=${fromSeq}`;
      return send(id, sandbox, await authorizedRequest(id, path, { headers: { accept: 'application/x-ndjson' } }), signal);
    },
    async cancel(runId: string) {
      const { id, sandbox } = open(runId);
      // Never boot a container just to cancel: a stopped one runs nothing. The
      // stored state (getState) can be stale — still "healthy" after the
      // container ended while this object was away — and any call that
      // reaches the container would then boot an empty one, so ask workerd's
      // own flag, the check the SDK makes itself (sandbox-object.ts).
      if (!(await sandbox.isContainerRunning())) {
        throw new Error(`sandbox ${id} is not running, so no harness runs there to cancel`);
      }
      const request = await authorizedRequest(id, `/runs/${encodeURIComponent(runId)}/cancel`, { method: 'POST' });
      return withDeadline(send(id, sandbox, request), CANCEL_TIMEOUT_MS, `cancel through sandbox ${id} timed out`);
    },
    async toolResult(runId: string, result: ToolResult) {
      const { id, sandbox } = open(runId);
      // The harness waiting for this answer runs in a live container; a stopped one has nobody to give it to.
      if (!(await sandbox.isContainerRunning())) {
        throw new Error(`sandbox ${id} is not running, so no harness there waits for tool call ${result.toolCallId}`);
      }
      const init = { method: 'POST', headers: { 'content-type': 'application/json' }, body: toolResultBody(result) };
      const request = await authorizedRequest(id, `/runs/${encodeURIComponent(runId)}/tool-results`, init);
      return withDeadline(send(id, sandbox, request), CANCEL_TIMEOUT_MS, `a tool result through sandbox ${id} timed out`);
    },
  };
}

function isLive(status: Process['status']): boolean {
  return status === 'running' || status === 'starting';
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function withDeadline<T>(work: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([work, deadline]).finally(() => {
    if (timer !== undefined) clearTimeout(timer);
  });
}

/** Rejects when `signal` fires first; a response that still arrives then has its body released. */
function abortable(pending: Promise<Response>, signal: AbortSignal): Promise<Response> {
  if (signal.aborted) {
    pending.then((response) => response.body?.cancel(), () => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      pending.then((response) => response.body?.cancel(), () => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (response) => {
        signal.removeEventListener('abort', onAbort);
        resolve(response);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Same status, headers and bytes; aborting `signal` cancels the stream back
 * through the RPC to the container (as `fetch(…, { signal })` would).
 */
function followAbort(response: Response, signal: AbortSignal): Response {
  const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
  response.body!.pipeTo(writable, { signal }).catch(() => undefined);
  return new Response(readable, { status: response.status, statusText: response.statusText, headers: response.headers });
}
