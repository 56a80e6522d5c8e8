import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CHAT_PROVIDERS,
  HARNESS_NAMES,
  resolveChatProvider,
  type ChatOptions,
  type ChatProvider,
  type HarnessName,
  type RunnerHealth,
  type RunnerRunRequest,
} from '../../src/protocol/index.ts';

type Env = Record<string, string | undefined>;

export type Availability = { ok: true } | { ok: false; reason: string };

/** Executable `name` in one of PATH's directories. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '') continue;
    const candidate = join(dir, name);
    try {
      if (!statSync(candidate).isFile()) continue;
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  return undefined;
}

const packageCache = new Map<string, boolean>();

/**
 * Whether an adapter package is installed, looked up the way Node resolves it
 * from this file (every `node_modules` up the tree). A file check, not an
 * import: the adapters are loaded only in the harness process that uses them.
 */
export function isPackageInstalled(name: string): boolean {
  const cached = packageCache.get(name);
  if (cached !== undefined) return cached;
  let dir = dirname(fileURLToPath(import.meta.url));
  let found = false;
  for (;;) {
    if (existsSync(join(dir, 'node_modules', name, 'package.json'))) {
      found = true;
      break;
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  packageCache.set(name, found);
  return found;
}

const SECRET_HINT = 'set it with `wrangler secret put NAME` when deployed, or in .dev.vars locally';

function missing(harness: HarnessName, problems: string[]): Availability {
  return problems.length === 0 ? { ok: true } : { ok: false, reason: `The ${harness} harness is not available on this runner: ${problems.join('; ')}.` };
}

function needsPackages(names: string[]): string[] {
  return names.filter((name) => !isPackageInstalled(name)).map((name) => `the ${name} package is not installed (run \`npm ci\` in container/)`);
}

function needsKey(names: string[], env: Env): string[] {
  if (names.some((name) => env[name]?.trim())) return [];
  const [first] = names;
  const either = names.length > 1 ? ` (or ${names.slice(1).join(' or ')})` : '';
  return [`${first}${either} is not set in the runner's environment; ${SECRET_HINT.replace('NAME', first ?? '')}`];
}

function needsCli(command: string, install: string, env: Env): string[] {
  return findOnPath(command, env.PATH) ? [] : [`the \`${command}\` CLI is not on PATH (install it with \`npm install -g ${install}\`; the container image has it)`];
}

/** Whether `harness` can run here; for `chat`, the request's model or options pick which key is needed. */
export function checkHarness(harness: HarnessName, env: Env, request?: Pick<RunnerRunRequest, 'model' | 'harnessOptions'>): Availability {
  switch (harness) {
    case 'demo':
      return { ok: true };
    case 'claude-code':
      return missing(harness, [
        ...needsCli('claude', '@anthropic-ai/claude-code', env),
        ...needsKey(['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN'], env),
        ...needsPackages(['@tanstack/ai-claude-code', '@tanstack/ai-sandbox-local-process']),
      ]);
    case 'codex':
      return missing(harness, [
        ...needsCli('codex', '@openai/codex', env),
        ...needsKey(['OPENAI_API_KEY', 'CODEX_API_KEY'], env),
        ...needsPackages(['@tanstack/ai-codex', '@tanstack/ai-sandbox-local-process']),
      ]);
    case 'chat': {
      const provider = resolveChatProvider(request?.model, (request?.harnessOptions ?? {}) as ChatOptions, (p) => chatProviderReady(p, env));
      return chatProviderCheck(provider, env);
    }
  }
}

function chatProviderCheck(provider: ChatProvider, env: Env): Availability {
  return provider === 'anthropic'
    ? missing('chat', [...needsKey(['ANTHROPIC_API_KEY'], env), ...needsPackages(['@tanstack/ai-anthropic'])])
    : missing('chat', [...needsKey(['OPENAI_API_KEY'], env), ...needsPackages(['@tanstack/ai-openai'])]);
}

function chatProviderReady(provider: ChatProvider, env: Env): boolean {
  return chatProviderCheck(provider, env).ok;
}

/**
 * `GET /health`: what can run here and, for the rest, why not. The reasons
 * name a missing CLI, package or variable, never a value, so the Worker's
 * preflight can answer `harness_unavailable` with them.
 */
export function runnerHealth(env: Env): RunnerHealth {
  const chatProviders = CHAT_PROVIDERS.filter((provider) => chatProviderReady(provider, env));
  const health: RunnerHealth = { ok: true, harnesses: [], chatProviders, unavailable: {} };
  for (const name of HARNESS_NAMES) {
    const check = name === 'chat' ? (chatProviders.length > 0 ? { ok: true as const } : chatProviderCheck('anthropic', env)) : checkHarness(name, env);
    if (check.ok) health.harnesses.push(name);
    else health.unavailable[name] = check.reason;
  }
  return health;
}

/** The harnesses `GET /health` lists. */
export function availableHarnesses(env: Env): HarnessName[] {
  return runnerHealth(env).harnesses;
}
