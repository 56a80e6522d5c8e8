import { HARNESS_NAMES, isHarnessName, type HarnessName } from './protocol/index.ts';

/**
 * The Worker's environment as this service reads it: wrangler vars (strings)
 * and secrets. `worker-configuration.d.ts` types the bindings; the optional
 * secrets are declared here because they are set per deployment.
 */
export type RelayEnv = Env & {
  RUNNER_URL?: string;
  API_TOKEN?: string;
  ATTACH_TOKEN_SECRET?: string;
  ATTACH_TOKEN_TTL_SECONDS?: string;
  ALLOWED_ORIGINS?: string;
  SANDBOX_REUSE?: string;
  SANDBOX_MAX_AGE_SECONDS?: string;
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
  /** Unset: auth is off (local development only; `/health` says so). */
  apiToken: string | undefined;
  /** Signs attach tokens when set; otherwise a key derived from `apiToken` does. */
  attachTokenSecret: string | undefined;
  attachTokenTtlMs: number;
  /** Exact origins (`https://app.example.com`) that may call the API from a browser. */
  allowedOrigins: readonly string[];
  /** Which sandbox a run executes in: its thread's (default) or its own; and when a thread's is replaced. */
  sandbox: { reuse: 'thread' | 'none'; maxAgeMs: number };
}

/** A variable the deployment set to something unusable; its message names the variable and the fix. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const DEFAULT_STALL_TIMEOUT_SECONDS = 120;
export const DEFAULT_RUN_TTL_SECONDS = 7 * 24 * 60 * 60;
export const DEFAULT_SANDBOX_MAX_AGE_SECONDS = 24 * 60 * 60;
export const DEFAULT_ATTACH_TOKEN_TTL_SECONDS = 60 * 60;

function seconds(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new ConfigError(`${name} must be a positive number of seconds; got ${JSON.stringify(raw)}. Fix it in wrangler.toml or .dev.vars.`);
  }
  return value;
}

/**
 * Exact origins only: a wildcard or a path would be silently matched by
 * nothing (or, worse, read as a suffix rule by a reader), so it fails loudly.
 */
function origins(raw: string | undefined): string[] {
  const listed = (raw ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  for (const origin of listed) {
    let parsed: string | null = null;
    try {
      parsed = new URL(origin).origin;
    } catch {
      parsed = null;
    }
    if (parsed !== origin || origin.includes('*')) {
      throw new ConfigError(`ALLOWED_ORIGINS must list exact origins such as https://app.example.com (scheme, host, optional port; no path, no trailing slash, no wildcard); got ${JSON.stringify(origin)}.`);
    }
  }
  return listed;
}

/**
 * Parsed once per `env` object: the CORS, auth and route layers of one request
 * all ask, and the bindings object lives as long as the isolate. A bad value is
 * not cached, so it fails every request that meets it.
 */
const parsed = new WeakMap<RelayEnv, RelayConfig>();

/** Reads and validates the configuration; a misconfiguration fails loudly instead of running with a surprise. */
export function readConfig(env: RelayEnv): RelayConfig {
  let config = parsed.get(env);
  if (!config) {
    config = parseConfig(env);
    parsed.set(env, config);
  }
  return config;
}

function parseConfig(env: RelayEnv): RelayConfig {
  const harness = env.DEFAULT_HARNESS?.trim() || 'demo';
  if (!isHarnessName(harness)) {
    throw new ConfigError(`DEFAULT_HARNESS must be one of ${HARNESS_NAMES.join(', ')}; got ${JSON.stringify(harness)}.`);
  }
  const runnerUrl = env.RUNNER_URL?.trim() || undefined;
  return {
    defaultHarness: harness,
    stallTimeoutMs: seconds(env.STALL_TIMEOUT_SECONDS, DEFAULT_STALL_TIMEOUT_SECONDS, 'STALL_TIMEOUT_SECONDS') * 1000,
    runTtlMs: seconds(env.RUN_TTL_SECONDS, DEFAULT_RUN_TTL_SECONDS, 'RUN_TTL_SECONDS') * 1000,
    runnerUrl,
    apiToken: env.API_TOKEN?.trim() || undefined,
    attachTokenSecret: env.ATTACH_TOKEN_SECRET?.trim() || undefined,
    attachTokenTtlMs: seconds(env.ATTACH_TOKEN_TTL_SECONDS, DEFAULT_ATTACH_TOKEN_TTL_SECONDS, 'ATTACH_TOKEN_TTL_SECONDS') * 1000,
    allowedOrigins: origins(env.ALLOWED_ORIGINS),
    sandbox: { reuse: sandboxReuse(env.SANDBOX_REUSE), maxAgeMs: seconds(env.SANDBOX_MAX_AGE_SECONDS, DEFAULT_SANDBOX_MAX_AGE_SECONDS, 'SANDBOX_MAX_AGE_SECONDS') * 1000 },
  };
}

function sandboxReuse(raw: string | undefined): 'thread' | 'none' {
  const value = raw?.trim() || 'thread';
  if (value !== 'thread' && value !== 'none') throw new ConfigError(`SANDBOX_REUSE must be "thread" or "none"; got ${JSON.stringify(raw)}.`);
  return value;
}
