import type { RelayConfig, RelayEnv } from '../config.ts';
import {
  CHAT_PROVIDER_KEYS,
  parseRunnerHealth,
  resolveChatProvider,
  type ChatOptions,
  type ChatProvider,
  type CreateRunInput,
  type HarnessName,
  type RunnerHealth,
} from '../protocol/index.ts';
import { ApiError } from './errors.ts';

/**
 * Can this run's harness start? Asked before anything is stored, so a
 * missing key or CLI is a `400 harness_unavailable` naming it instead of a
 * stored run that fails a moment later.
 *
 * - Over `RUNNER_URL` the runner is a process the Worker can ask cheaply:
 *   its `/health` knows its CLIs, keys and adapter packages.
 * - In the container, asking would boot a sandbox just to answer, so the
 *   Worker decides from the secrets it would pass (the image ships both CLIs).
 */

/** A runner's health changes only when it restarts; a POST burst asks once. */
const HEALTH_CACHE_MS = 10_000;
const HEALTH_TIMEOUT_MS = 5_000;

const healthCache = new Map<string, { at: number; health: Promise<RunnerHealth> }>();

async function fetchHealth(runnerUrl: string): Promise<RunnerHealth> {
  const url = new URL('health', runnerUrl.endsWith('/') ? runnerUrl : `${runnerUrl}/`);
  const response = await fetch(url, { signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS) });
  if (!response.ok) {
    await response.body?.cancel();
    throw new Error(`GET /health answered ${response.status}`);
  }
  return parseRunnerHealth(await response.json());
}

function runnerHealth(runnerUrl: string, now: number): Promise<RunnerHealth> {
  const cached = healthCache.get(runnerUrl);
  if (cached !== undefined && now - cached.at < HEALTH_CACHE_MS) return cached.health;
  const health = fetchHealth(runnerUrl);
  healthCache.set(runnerUrl, { at: now, health });
  // A failed probe is not remembered: the next request asks again.
  health.catch(() => healthCache.delete(runnerUrl));
  return health;
}

const SECRET_HINT = 'set it with `wrangler secret put NAME` (or in .dev.vars locally)';

function needsSecret(names: readonly string[], env: RelayEnv, harness: HarnessName): string | undefined {
  const values = env as unknown as Record<string, unknown>;
  if (names.some((name) => typeof values[name] === 'string' && (values[name] as string).trim() !== '')) return undefined;
  const [first = ''] = names;
  const either = names.length > 1 ? ` (or ${names.slice(1).join(' or ')})` : '';
  return `The ${harness} harness needs ${first}${either}, which is not set; ${SECRET_HINT.replace('NAME', first)}.`;
}

function secretsProblem(input: CreateRunInput, env: RelayEnv): string | undefined {
  switch (input.harness) {
    case 'demo':
      return undefined;
    case 'claude-code':
      return needsSecret(['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'], env, 'claude-code');
    case 'codex':
      return needsSecret(['OPENAI_API_KEY'], env, 'codex');
    case 'chat': {
      const has = (provider: ChatProvider) => needsSecret([CHAT_PROVIDER_KEYS[provider]], env, 'chat') === undefined;
      return needsSecret([CHAT_PROVIDER_KEYS[chatProvider(input, has)]], env, 'chat');
    }
  }
}

function chatProvider(input: CreateRunInput, usable: (provider: ChatProvider) => boolean): ChatProvider {
  return resolveChatProvider(input.model, (input.harnessOptions ?? {}) as ChatOptions, usable);
}

function runnerProblem(input: CreateRunInput, health: RunnerHealth): string | undefined {
  if (input.harness === 'chat') {
    const provider = chatProvider(input, (p) => health.chatProviders.includes(p));
    if (health.chatProviders.includes(provider)) return undefined;
    const key = CHAT_PROVIDER_KEYS[provider];
    return `The chat harness's ${provider} provider cannot run on this runner: it needs ${key} in the runner's environment (and its adapter package); ${SECRET_HINT.replace('NAME', key)}.`;
  }
  if (health.harnesses.includes(input.harness)) return undefined;
  return health.unavailable[input.harness] ?? `The ${input.harness} harness is not available on this runner.`;
}

/** Throws `400 harness_unavailable` (or `503 runner_unavailable` when the runner cannot say). */
export async function requireHarnessAvailable(input: CreateRunInput, env: RelayEnv, config: RelayConfig): Promise<void> {
  if (input.harness === 'demo') return;
  let problem: string | undefined;
  if (config.runnerUrl === undefined) {
    problem = secretsProblem(input, env);
  } else {
    let health: RunnerHealth;
    try {
      health = await runnerHealth(config.runnerUrl, Date.now());
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ApiError(503, 'runner_unavailable', `Could not ask the runner at RUNNER_URL whether the ${input.harness} harness can run (${reason}). Start the runner, then retry.`);
    }
    problem = runnerProblem(input, health);
  }
  if (problem !== undefined) throw new ApiError(400, 'harness_unavailable', problem);
}
