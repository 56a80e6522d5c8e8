import type { HarnessName } from '../../src/protocol/index.ts';

type Env = Record<string, string | undefined>;

/**
 * The environment of a harness process (SPEC "Least environment"), built from
 * an allowlist: the runner's environment also holds what only the runner or
 * the Worker may use (RUNNER_TOKEN, and locally API_TOKEN, ATTACH_TOKEN_SECRET,
 * RUNNER_SECRET or whatever the owner's shell exports), and an agent can print
 * its own environment. A denylist would leak the first secret nobody listed.
 */

/** What every harness may need to run a program at all. */
const BASICS = [
  'PATH',
  'HOME',
  // Harmless process basics: text encoding, time zone, scratch space, the user and shell a CLI's tools run as.
  'LANG',
  'LC_ALL',
  'LC_CTYPE',
  'TZ',
  'TMPDIR',
  'USER',
  'LOGNAME',
  'SHELL',
  // How the harness reaches its provider on networks that need it: extra CA roots and an egress proxy.
  'NODE_EXTRA_CA_CERTS',
  'SSL_CERT_FILE',
  'SSL_CERT_DIR',
  'HTTPS_PROXY',
  'HTTP_PROXY',
  'NO_PROXY',
  'https_proxy',
  'http_proxy',
  'no_proxy',
] as const;

const ANTHROPIC = ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'] as const;
const OPENAI = ['OPENAI_API_KEY', 'OPENAI_BASE_URL'] as const;

/** Each harness's own keys and provider settings; `chat` picks its provider per run, so it may need either. */
const OWN: Record<HarnessName, readonly string[]> = {
  demo: [],
  'claude-code': [
    ...ANTHROPIC,
    'CLAUDE_CODE_OAUTH_TOKEN',
    'CLAUDE_CONFIG_DIR',
    // The CLI's own switches for quiet, bounded runs (TOOLCHAIN.md).
    'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC',
    'CLAUDE_CODE_MAX_RETRIES',
    'DISABLE_TELEMETRY',
    'DISABLE_AUTOUPDATER',
  ],
  codex: [...OPENAI, 'CODEX_API_KEY', 'CODEX_HOME'],
  chat: [...ANTHROPIC, ...OPENAI],
};

/** Names no harness ever gets, whatever a list above says: the relay's and the runner's own credentials. */
export const NEVER_FOR_HARNESS = ['API_TOKEN', 'ATTACH_TOKEN_SECRET', 'RUNNER_TOKEN', 'RUNNER_SECRET'] as const;

/**
 * `workspaceSecrets`: the names the run's `workspace.secrets` asked for (the
 * Worker checked them against `WORKSPACE_SECRETS`): exactly those join the
 * allowlist, for this run's setup and harness only.
 */
export function harnessEnv(harness: HarnessName, env: Env, workspaceSecrets: readonly string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [...BASICS, ...OWN[harness], ...workspaceSecrets]) {
    const value = env[name];
    if (value !== undefined && !(NEVER_FOR_HARNESS as readonly string[]).includes(name)) out[name] = value;
  }
  return out;
}
