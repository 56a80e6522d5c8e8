import type { Sandbox } from './sandbox-object.ts';
import type { RelayConfig, RelayEnv } from '../config.ts';
import { httpTransport } from './http-transport.ts';
import { runnerTokenKey, sandboxRunnerToken } from './runner-token.ts';
import { sandboxTransport } from './sandbox-transport.ts';
import type { RunnerTransport } from './transport.ts';

/** Where the Dockerfile puts the runner, and the port it listens on inside the container. */
export const CONTAINER_RUNNER = { command: 'node /opt/harness-relay/container/src/main.ts', port: 8788 } as const;

/**
 * The harness keys: secrets that go to the container's environment and nowhere
 * else; with them the provider base URLs (SPEC: they reach the harness
 * environment, e.g. a Cloudflare AI Gateway URL), which may carry a gateway token.
 */
const HARNESS_SECRETS = ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL'] as const;

/** With them the values of `WORKSPACE_SECRETS`' names: the runner gives each to the setup and harness of a run that asks for it. */
export function harnessSecrets(env: RelayEnv, workspaceSecrets: readonly string[] = []): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const name of [...HARNESS_SECRETS, ...workspaceSecrets]) {
    // Workspace secret names are the operator's own; the env object holds them as Worker secrets.
    const value = (env as unknown as Record<string, unknown>)[name];
    if (typeof value === 'string' && value !== '') secrets[name] = value;
  }
  return secrets;
}

/** `RUNNER_URL` set: plain HTTP (dev, tests) with `RUNNER_TOKEN`. Unset: the container binding, a derived token per sandbox. */
export function transportFor(env: RelayEnv, config: RelayConfig, sandboxIdFor: (runId: string) => string): RunnerTransport {
  // readConfig refuses RUNNER_URL without RUNNER_TOKEN, so the token is there whenever the URL is.
  if (config.runnerUrl) return httpTransport(config.runnerUrl, config.runnerToken ?? '');
  return sandboxTransport(env.Sandbox as unknown as DurableObjectNamespace<Sandbox>, {
    // The thread chose it when the run began (one sandbox per thread, by default).
    sandboxId: sandboxIdFor,
    runnerPort: CONTAINER_RUNNER.port,
    runnerCommand: CONTAINER_RUNNER.command,
    env: harnessSecrets(env, config.workspaceSecrets),
    // Unset: the SDK's default (10m), or what a sandbox was configured with before.
    sleepAfter: config.sandbox.sleepAfter,
    runnerToken: async (sandboxId) => sandboxRunnerToken(await runnerTokenKey(config), sandboxId),
  });
}
