import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig, type RelayEnv } from '../../src/config.ts';
import { attachTokenKey } from '../../src/http/attach-token.ts';
import { runnerTokenKey, sandboxRunnerToken } from '../../src/runner/runner-token.ts';
import { CONTAINER_RUNNER, transportFor } from '../../src/runner/select.ts';

/**
 * The container transport's runner token, against a stand-in for the Sandbox
 * namespace that records what the transport asks of each sandbox: the
 * process it starts (command, env) and every request it sends the runner.
 */
interface Recorded {
  started: { sandbox: string; command: string; env: Record<string, string> }[];
  requests: { sandbox: string; method: string; path: string; authorization: string | null; body: string }[];
}

function fakeSandboxes(): { namespace: unknown; recorded: Recorded } {
  const recorded: Recorded = { started: [], requests: [] };
  const running = new Set<string>();
  const stub = (sandbox: string) => ({
    configure: async () => {},
    getState: async () => ({ status: 'running' }),
    isContainerRunning: async () => true,
    getProcess: async () => (running.has(sandbox) ? { status: 'running', waitForPort: async () => {} } : null),
    startProcess: async (command: string, options: { env: Record<string, string> }) => {
      recorded.started.push({ sandbox, command, env: options.env });
      running.add(sandbox);
      return { status: 'running', waitForPort: async () => {} };
    },
    containerFetch: async (request: Request, port: number) => {
      const url = new URL(request.url);
      // The SDK's control server (port 3000) is the sandbox's own business, not the runner's.
      if (port !== CONTAINER_RUNNER.port) return Response.json({ ok: true });
      recorded.requests.push({ sandbox, method: request.method, path: url.pathname, authorization: request.headers.get('authorization'), body: await request.text() });
      // Nothing listens before the runner is started: the probe must fail so the transport starts one.
      if (!running.has(sandbox)) return new Response('not listening', { status: 503 });
      if (url.pathname === '/health') return Response.json({ ok: true, harnesses: ['demo'] });
      if (url.pathname.endsWith('/cancel')) return Response.json({ ok: true });
      return new Response('', { headers: { 'content-type': 'application/x-ndjson' } });
    },
  });
  const namespace = {
    idFromName: (name: string) => ({ name, toString: () => name }),
    get: (id: { name: string }) => stub(id.name),
  };
  return { namespace, recorded };
}

function envWith(namespace: unknown, vars: Record<string, string>): RelayEnv {
  return { Sandbox: namespace, ...vars } as unknown as RelayEnv;
}

const REQUEST = { runId: 'run_a1', threadId: 'thread_a', tenant: null, messages: [{ role: 'user' as const, content: 'hi' }], harness: 'demo' as const };

describe('the sandbox transport and the runner token', () => {
  it('starts each runner with its sandbox token in the process env and sends it on every request but /health', async () => {
    const { namespace, recorded } = fakeSandboxes();
    const env = envWith(namespace, { RUNNER_SECRET: 'runner-secret-for-tests-1f2e3d', ANTHROPIC_API_KEY: 'sk-ant-transport-test' });
    const config = readConfig(env);
    const transport = transportFor(env, config, (runId) => `sandbox-${runId.slice(-1)}`);

    await transport.start(REQUEST);
    await transport.reattach('run_a1', 3);
    await transport.cancel('run_a1');
    await transport.start({ ...REQUEST, runId: 'run_b2', threadId: 'thread_b' });

    const key = await runnerTokenKey(config);
    const tokenA = await sandboxRunnerToken(key, 'sandbox-1');
    const tokenB = await sandboxRunnerToken(key, 'sandbox-2');
    expect(tokenA).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenB).not.toBe(tokenA);

    expect(recorded.started.map(({ sandbox, env: processEnv }) => [sandbox, processEnv.RUNNER_TOKEN])).toEqual([
      ['sandbox-1', tokenA],
      ['sandbox-2', tokenB],
    ]);
    for (const { command } of recorded.started) expect(command).not.toMatch(/[0-9a-f]{64}/);

    const toRunner = recorded.requests.filter((request) => request.path !== '/health');
    expect(toRunner.map(({ sandbox, method, path }) => `${sandbox} ${method} ${path}`)).toEqual([
      'sandbox-1 POST /run',
      'sandbox-1 GET /runs/run_a1/stream',
      'sandbox-1 POST /runs/run_a1/cancel',
      'sandbox-2 POST /run',
    ]);
    for (const request of toRunner) expect(request.authorization).toBe(`Bearer ${request.sandbox === 'sandbox-1' ? tokenA : tokenB}`);
    // The probe carries no credential, and no body carries the token.
    for (const request of recorded.requests.filter((r) => r.path === '/health')) expect(request.authorization).toBeNull();
    for (const request of recorded.requests) expect(request.body).not.toContain(tokenA);
  });

  it('recomputes the same token in a new transport (a restarted run object finds its runner)', async () => {
    const vars = { RUNNER_SECRET: 'runner-secret-for-tests-1f2e3d' };
    const first = await sandboxRunnerToken(await runnerTokenKey(readConfig(envWith({}, vars))), 'sandbox-x');
    const again = await sandboxRunnerToken(await runnerTokenKey(readConfig(envWith({}, { ...vars }))), 'sandbox-x');
    expect(again).toBe(first);
  });

  it('without RUNNER_SECRET derives the key from the attach-token secret, under its own label', async () => {
    const secrets = (attachTokenSecret: string) => ({ runnerSecret: undefined, attachTokenSecret, apiToken: undefined });
    const one = await sandboxRunnerToken(await runnerTokenKey(secrets('attach-secret-one-8c1d')), 'sandbox-x');
    const two = await sandboxRunnerToken(await runnerTokenKey(secrets('attach-secret-two-4b7e')), 'sandbox-x');
    expect(two).not.toBe(one);
    // Not the attach-token key itself: an attach-token MAC of the id is not the runner token.
    const attachKey = await attachTokenKey({ attachTokenSecret: 'attach-secret-one-8c1d', apiToken: undefined });
    const attachMac = new Uint8Array(await crypto.subtle.sign('HMAC', attachKey, new TextEncoder().encode('sandbox-x')));
    expect(Array.from(attachMac, (b) => b.toString(16).padStart(2, '0')).join('')).not.toBe(one);
  });
});

describe('RUNNER_TOKEN with RUNNER_URL', () => {
  it('is required: RUNNER_URL alone is a ConfigError naming RUNNER_TOKEN', () => {
    const env = envWith({}, { RUNNER_URL: 'http://127.0.0.1:8788' });
    expect(() => readConfig(env)).toThrowError(ConfigError);
    expect(() => readConfig(env)).toThrowError(/RUNNER_TOKEN/);
  });

  it('is read when both are set', () => {
    expect(readConfig(envWith({}, { RUNNER_URL: 'http://127.0.0.1:8788', RUNNER_TOKEN: ' tok-0123456789abcdef ' }))).toMatchObject({ runnerToken: 'tok-0123456789abcdef' });
  });
});
