import {
  HARNESS_NAMES,
  ProtocolError,
  SAFE_HARNESS_DEFAULTS,
  isHarnessName,
  ownRecord,
  parseHarnessOptions,
  parseSecretNames,
  parseTrustedJson,
  type HarnessName,
} from './protocol/index.ts';

/**
 * The Worker's environment as this service reads it: wrangler vars (strings)
 * and secrets. `worker-configuration.d.ts` types the bindings; the optional
 * secrets are declared here because they are set per deployment.
 */
export type RelayEnv = Env & {
  RUNNER_URL?: string;
  /** Secret: the runner's bearer token when RUNNER_URL is set (the same value as the runner's RUNNER_TOKEN). */
  RUNNER_TOKEN?: string;
  /** Secret: derives each sandbox's runner token (container transport); unset, a key from the attach-token secret does. */
  RUNNER_SECRET?: string;
  API_TOKEN?: string;
  ATTACH_TOKEN_SECRET?: string;
  ATTACH_TOKEN_TTL_SECONDS?: string;
  ALLOWED_ORIGINS?: string;
  SANDBOX_REUSE?: string;
  SANDBOX_MAX_AGE_SECONDS?: string;
  SANDBOX_SLEEP_AFTER?: string;
  DEFAULT_HARNESS_OPTIONS?: string;
  RUN_MAX_SECONDS?: string;
  IDLE_TIMEOUT_SECONDS?: string;
  RUN_MAX_EVENTS?: string;
  RUN_MAX_BYTES?: string;
  MAX_ACTIVE_RUNS?: string;
  MAX_CLIENTS_PER_RUN?: string;
  MAX_THREAD_MESSAGES?: string;
  ALLOW_UNSAFE_HARNESS_OPTIONS?: string;
  ANTHROPIC_API_KEY?: string;
  OPENAI_API_KEY?: string;
  CLAUDE_CODE_OAUTH_TOKEN?: string;
  /** Where the harnesses reach the providers, e.g. a Cloudflare AI Gateway URL; passed to the container like the keys. */
  ANTHROPIC_BASE_URL?: string;
  OPENAI_BASE_URL?: string;
  /** Comma-separated environment variable names a run's `workspace.secrets` may ask for; their values are Worker secrets of those names. */
  WORKSPACE_SECRETS?: string;
  /** Comma-separated exact origins a webhook tool's URL may be on (the SSRF guard). */
  TOOL_WEBHOOK_ORIGINS?: string;
  /** Secret: signs every webhook request (`X-Relay-Signature`). */
  TOOL_WEBHOOK_SECRET?: string;
  TOOL_TIMEOUT_SECONDS?: string;
  CLIENT_TOOL_TIMEOUT_SECONDS?: string;
};

export interface RelayConfig {
  defaultHarness: HarnessName;
  stallTimeoutMs: number;
  runTtlMs: number;
  /** Set: reach the runner over HTTP (dev, tests). Unset: the container binding. */
  runnerUrl: string | undefined;
  /** RUNNER_TOKEN: required with `runnerUrl`, sent on every runner request but `/health`. */
  runnerToken: string | undefined;
  /** RUNNER_SECRET: the container transport derives one runner token per sandbox from it. */
  runnerSecret: string | undefined;
  /** Unset: auth is off (local development only; `/health` says so). */
  apiToken: string | undefined;
  /** Signs attach tokens when set; otherwise a key derived from `apiToken` does. */
  attachTokenSecret: string | undefined;
  attachTokenTtlMs: number;
  /** Exact origins (`https://app.example.com`) that may call the API from a browser. */
  allowedOrigins: readonly string[];
  /** Per harness, what a run gets for the options its caller did not set (`DEFAULT_HARNESS_OPTIONS` over the safe defaults). */
  defaultHarnessOptions: Readonly<Partial<Record<HarnessName, Readonly<Record<string, unknown>>>>>;
  /** `ALLOW_UNSAFE_HARNESS_OPTIONS=true`: callers may ask for `bypassPermissions` / `danger-full-access`. */
  allowUnsafeHarnessOptions: boolean;
  /** `WORKSPACE_SECRETS`: the names `workspace.secrets` may list; each value reaches the container's environment, then setup and the harness. */
  workspaceSecrets: readonly string[];
  /** SPEC "Workspace and host tools" and "Interactive runs". */
  tools: {
    /** `TOOL_WEBHOOK_ORIGINS`: the only origins a webhook tool may be on. */
    webhookOrigins: readonly string[];
    /** `TOOL_WEBHOOK_SECRET`; unset: webhook tools are refused at `POST /runs`. */
    webhookSecret: string | undefined;
    /** `TOOL_TIMEOUT_SECONDS`: one webhook call, its retries included. */
    timeoutMs: number;
    /** `CLIENT_TOOL_TIMEOUT_SECONDS`: how long a client tool call waits for its answer. */
    clientTimeoutMs: number;
  };
  /** SPEC "Limits": what one run, client or tenant may cost. */
  limits: RelayLimits;
  /** Which sandbox a run executes in: its thread's (default) or its own; and when a thread's is replaced. */
  sandbox: {
    reuse: 'thread' | 'none';
    maxAgeMs: number;
    /**
     * `SANDBOX_SLEEP_AFTER`: how long an idle sandbox stays awake, holding one of
     * `max_instances` (README "Capacity"). Unset: the SDK's default, 10 minutes.
     */
    sleepAfter: string | undefined;
  };
}

export interface RelayLimits {
  /** `RUN_MAX_SECONDS`: a run still going after this fails `max_duration_exceeded`. */
  runMaxMs: number;
  /** `IDLE_TIMEOUT_SECONDS`: the harness wrote no chunk (keep-alives do not count) for this long: `idle_timeout`. */
  idleTimeoutMs: number;
  /** `RUN_MAX_EVENTS`: `max_events_exceeded`. */
  maxEvents: number;
  /** `RUN_MAX_BYTES`, of chunk JSON: `max_bytes_exceeded`. */
  maxBytes: number;
  /** `MAX_ACTIVE_RUNS`, per tenant: `POST /runs` answers `429 too_many_runs`. */
  maxActiveRuns: number;
  /** `MAX_CLIENTS_PER_RUN`: a tail past it answers `429 too_many_clients`. */
  maxClientsPerRun: number;
  /** `MAX_THREAD_MESSAGES`: a turn past it answers `409 thread_full`. */
  maxThreadMessages: number;
}

export const DEFAULT_LIMITS = {
  RUN_MAX_SECONDS: 3600,
  IDLE_TIMEOUT_SECONDS: 900,
  RUN_MAX_EVENTS: 100_000,
  RUN_MAX_BYTES: 67_108_864,
  MAX_ACTIVE_RUNS: 20,
  MAX_CLIENTS_PER_RUN: 200,
  MAX_THREAD_MESSAGES: 10_000,
} as const;

/** A variable the deployment set to something unusable; its message names the variable and the fix. */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const DEFAULT_STALL_TIMEOUT_SECONDS = 120;
export const DEFAULT_RUN_TTL_SECONDS = 7 * 24 * 60 * 60;
export const DEFAULT_SANDBOX_MAX_AGE_SECONDS = 24 * 60 * 60;
export const DEFAULT_ATTACH_TOKEN_TTL_SECONDS = 60 * 60;
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 60;
export const DEFAULT_CLIENT_TOOL_TIMEOUT_SECONDS = 3600;

function workspaceSecrets(raw: string | undefined): string[] {
  try {
    return parseSecretNames(raw);
  } catch (error) {
    throw new ConfigError(`WORKSPACE_SECRETS must be comma-separated environment variable names: ${error instanceof Error ? error.message : String(error)}.`);
  }
}

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
function origins(raw: string | undefined, name = 'ALLOWED_ORIGINS'): string[] {
  const listed = (raw ?? '').split(',').map((origin) => origin.trim()).filter((origin) => origin !== '');
  for (const origin of listed) {
    let parsed: string | null = null;
    try {
      parsed = new URL(origin).origin;
    } catch {
      parsed = null;
    }
    if (parsed !== origin || origin.includes('*')) {
      throw new ConfigError(`${name} must list exact origins such as https://app.example.com (scheme, host, optional port; no path, no trailing slash, no wildcard); got ${JSON.stringify(origin)}.`);
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
  const runnerToken = env.RUNNER_TOKEN?.trim() || undefined;
  if (runnerUrl && !runnerToken) {
    throw new ConfigError('RUNNER_URL is set but RUNNER_TOKEN is not: the runner answers only requests with its token. Set the same RUNNER_TOKEN on the Worker (`wrangler secret put RUNNER_TOKEN`, or .dev.vars) and the runner.');
  }
  return {
    defaultHarness: harness,
    stallTimeoutMs: seconds(env.STALL_TIMEOUT_SECONDS, DEFAULT_STALL_TIMEOUT_SECONDS, 'STALL_TIMEOUT_SECONDS') * 1000,
    runTtlMs: seconds(env.RUN_TTL_SECONDS, DEFAULT_RUN_TTL_SECONDS, 'RUN_TTL_SECONDS') * 1000,
    runnerUrl,
    runnerToken,
    runnerSecret: env.RUNNER_SECRET?.trim() || undefined,
    apiToken: env.API_TOKEN?.trim() || undefined,
    attachTokenSecret: env.ATTACH_TOKEN_SECRET?.trim() || undefined,
    attachTokenTtlMs: seconds(env.ATTACH_TOKEN_TTL_SECONDS, DEFAULT_ATTACH_TOKEN_TTL_SECONDS, 'ATTACH_TOKEN_TTL_SECONDS') * 1000,
    allowedOrigins: origins(env.ALLOWED_ORIGINS),
    defaultHarnessOptions: harnessDefaults(env.DEFAULT_HARNESS_OPTIONS),
    limits: {
      runMaxMs: seconds(env.RUN_MAX_SECONDS, DEFAULT_LIMITS.RUN_MAX_SECONDS, 'RUN_MAX_SECONDS') * 1000,
      idleTimeoutMs: seconds(env.IDLE_TIMEOUT_SECONDS, DEFAULT_LIMITS.IDLE_TIMEOUT_SECONDS, 'IDLE_TIMEOUT_SECONDS') * 1000,
      maxEvents: count(env.RUN_MAX_EVENTS, DEFAULT_LIMITS.RUN_MAX_EVENTS, 'RUN_MAX_EVENTS'),
      maxBytes: count(env.RUN_MAX_BYTES, DEFAULT_LIMITS.RUN_MAX_BYTES, 'RUN_MAX_BYTES'),
      maxActiveRuns: count(env.MAX_ACTIVE_RUNS, DEFAULT_LIMITS.MAX_ACTIVE_RUNS, 'MAX_ACTIVE_RUNS'),
      maxClientsPerRun: count(env.MAX_CLIENTS_PER_RUN, DEFAULT_LIMITS.MAX_CLIENTS_PER_RUN, 'MAX_CLIENTS_PER_RUN'),
      maxThreadMessages: count(env.MAX_THREAD_MESSAGES, DEFAULT_LIMITS.MAX_THREAD_MESSAGES, 'MAX_THREAD_MESSAGES'),
    },
    allowUnsafeHarnessOptions: flag(env.ALLOW_UNSAFE_HARNESS_OPTIONS, 'ALLOW_UNSAFE_HARNESS_OPTIONS'),
    workspaceSecrets: workspaceSecrets(env.WORKSPACE_SECRETS),
    tools: {
      webhookOrigins: origins(env.TOOL_WEBHOOK_ORIGINS, 'TOOL_WEBHOOK_ORIGINS'),
      webhookSecret: env.TOOL_WEBHOOK_SECRET?.trim() || undefined,
      timeoutMs: seconds(env.TOOL_TIMEOUT_SECONDS, DEFAULT_TOOL_TIMEOUT_SECONDS, 'TOOL_TIMEOUT_SECONDS') * 1000,
      clientTimeoutMs: seconds(env.CLIENT_TOOL_TIMEOUT_SECONDS, DEFAULT_CLIENT_TOOL_TIMEOUT_SECONDS, 'CLIENT_TOOL_TIMEOUT_SECONDS') * 1000,
    },
    sandbox: {
      reuse: sandboxReuse(env.SANDBOX_REUSE),
      maxAgeMs: seconds(env.SANDBOX_MAX_AGE_SECONDS, DEFAULT_SANDBOX_MAX_AGE_SECONDS, 'SANDBOX_MAX_AGE_SECONDS') * 1000,
      sleepAfter: sleepAfter(env.SANDBOX_SLEEP_AFTER),
    },
  };
}

/** The SDK's time expressions (@cloudflare/containers parseTimeExpression): `90s`, `10m`, `2h`; a bare number is seconds. */
function sleepAfter(raw: string | undefined): string | undefined {
  const value = raw?.trim();
  if (!value) return undefined;
  const match = /^([1-9]\d*)([smh]?)$/.exec(value);
  if (!match) throw new ConfigError(`SANDBOX_SLEEP_AFTER must be a duration such as 90s, 10m or 1h; got ${JSON.stringify(raw)}.`);
  return `${match[1]}${match[2] || 's'}`;
}

function sandboxReuse(raw: string | undefined): 'thread' | 'none' {
  const value = raw?.trim() || 'thread';
  if (value !== 'thread' && value !== 'none') throw new ConfigError(`SANDBOX_REUSE must be "thread" or "none"; got ${JSON.stringify(raw)}.`);
  return value;
}

function count(raw: string | undefined, fallback: number, name: string): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError(`${name} must be a whole number >= 1; got ${JSON.stringify(raw)}. Fix it in wrangler.toml or .dev.vars.`);
  }
  return value;
}

function flag(raw: string | undefined, name: string): boolean {
  const value = raw?.trim().toLowerCase() || 'false';
  if (value !== 'true' && value !== 'false') throw new ConfigError(`${name} must be "true" or "false"; got ${JSON.stringify(raw)}.`);
  return value === 'true';
}

/**
 * `DEFAULT_HARNESS_OPTIONS`: JSON, per harness, checked by the harness schema.
 * The operator may make an unsafe mode the default (a container deployment,
 * where the sandbox is the boundary): that is theirs to decide, not a caller's.
 */
function harnessDefaults(raw: string | undefined): RelayConfig['defaultHarnessOptions'] {
  const defaults: Partial<Record<HarnessName, Record<string, unknown>>> = {};
  for (const [harness, options] of Object.entries(SAFE_HARNESS_DEFAULTS)) defaults[harness as HarnessName] = { ...options };
  if (raw === undefined || raw.trim() === '') return defaults;
  try {
    const byHarness = ownRecord(parseTrustedJson(raw, 'DEFAULT_HARNESS_OPTIONS'), 'DEFAULT_HARNESS_OPTIONS');
    for (const [harness, options] of Object.entries(byHarness)) {
      if (!isHarnessName(harness)) throw new ProtocolError(`DEFAULT_HARNESS_OPTIONS.${harness}`, `not a harness (known: ${HARNESS_NAMES.join(', ')})`);
      defaults[harness] = { ...defaults[harness], ...parseHarnessOptions(harness, options, { allowUnsafe: true }, `DEFAULT_HARNESS_OPTIONS.${harness}`) };
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ConfigError(`DEFAULT_HARNESS_OPTIONS must be JSON such as {"claude-code": {"permissionMode": "acceptEdits"}}; ${reason}.`);
  }
  return defaults;
}
