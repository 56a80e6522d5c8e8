import { HARNESS_NAMES, isHarnessName, type HarnessName } from './protocol/index.ts';

/**
 * The Worker's environment as this service reads it: wrangler vars (strings)
 * and secrets. `worker-configuration.d.ts` types the bindings; the optional
 * secrets are declared here because they are set per deployment.
 */
export type RelayEnv = Env & {
  RUNNER_URL?: string;
  API_TOKEN?: string;
  ALLOWED_ORIGINS?: string;
  ANTHROPIC_API_KEY?: string;
  OPENAI_API_KEY?: string;
  CLAUDE_CODE_OAUTH_TOKEN?: string;
};

export interface RelayConfig {
  defaultHarness: HarnessName;
  stallTimeoutMs: number;
  runTtlMs: number;
  /** Set: reach the runner over HTTP (dev, tests). Unset: the container binding. */
  runnerUrl: string | undefined;
}

export const DEFAULT_STALL_TIMEOUT_SECONDS = 120;
export const DEFAULT_RUN_TTL_SECONDS = 7 * 24 * 60 * 60;

function seconds(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new Error(`${name} must be a positive number of seconds; got ${JSON.stringify(raw)}. Fix it in wrangler.toml or .dev.vars.`);
  }
  return value;
}

/** Reads and validates the configuration; a misconfiguration fails loudly instead of running with a surprise. */
export function readConfig(env: RelayEnv): RelayConfig {
  const harness = env.DEFAULT_HARNESS?.trim() || 'demo';
  if (!isHarnessName(harness)) {
    throw new Error(`DEFAULT_HARNESS must be one of ${HARNESS_NAMES.join(', ')}; got ${JSON.stringify(harness)}.`);
  }
  const runnerUrl = env.RUNNER_URL?.trim() || undefined;
  return {
    defaultHarness: harness,
    stallTimeoutMs: seconds(env.STALL_TIMEOUT_SECONDS, DEFAULT_STALL_TIMEOUT_SECONDS, 'STALL_TIMEOUT_SECONDS') * 1000,
    runTtlMs: seconds(env.RUN_TTL_SECONDS, DEFAULT_RUN_TTL_SECONDS, 'RUN_TTL_SECONDS') * 1000,
    runnerUrl,
  };
}
