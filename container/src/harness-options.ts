import { ProtocolError, type HarnessName } from '../../src/protocol/index.ts';

/**
 * `harnessOptions` of the adapter harnesses. The wire contract passes them
 * through as a flat object; the runner checks them before any stream starts,
 * so a typo is a 400 naming the field instead of a run that fails later.
 */
export interface ClaudeCodeOptions {
  /** Resume this Claude Code session (from an earlier run's `claude-code.session-id` event). */
  sessionId?: string;
  maxTurns?: number;
  permissionMode?: 'default' | 'acceptEdits' | 'bypassPermissions' | 'plan';
}

export interface CodexOptions {
  sessionId?: string;
  sandboxMode?: 'read-only' | 'workspace-write' | 'danger-full-access';
  modelReasoningEffort?: 'minimal' | 'low' | 'medium' | 'high';
}

export const CHAT_PROVIDERS = ['anthropic', 'openai'] as const;
export type ChatProvider = (typeof CHAT_PROVIDERS)[number];

export interface ChatOptions {
  provider?: ChatProvider;
  systemPrompt?: string;
}

type FieldRule = 'string' | 'int' | readonly string[];

const RULES = {
  'claude-code': { sessionId: 'string', maxTurns: 'int', permissionMode: ['default', 'acceptEdits', 'bypassPermissions', 'plan'] },
  codex: { sessionId: 'string', sandboxMode: ['read-only', 'workspace-write', 'danger-full-access'], modelReasoningEffort: ['minimal', 'low', 'medium', 'high'] },
  chat: { provider: CHAT_PROVIDERS, systemPrompt: 'string' },
} as const satisfies Record<Exclude<HarnessName, 'demo'>, Record<string, FieldRule>>;

function check(rules: Record<string, FieldRule>, value: Record<string, unknown> | undefined, path: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(value ?? {})) {
    const rule = rules[key];
    const at = `${path}.${key}`;
    if (rule === undefined) throw new ProtocolError(at, `unknown option (known: ${Object.keys(rules).join(', ')})`);
    if (rule === 'string' && (typeof raw !== 'string' || raw === '')) throw new ProtocolError(at, 'expected a non-empty string');
    if (rule === 'int' && (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < 1)) throw new ProtocolError(at, 'expected an integer >= 1');
    if (Array.isArray(rule) && !rule.includes(raw as string)) throw new ProtocolError(at, `expected one of ${rule.join(', ')}`);
    out[key] = raw;
  }
  return out;
}

// The casts below are safe: `check` has verified every field against the same RULES the types mirror.
export function parseClaudeCodeOptions(value: Record<string, unknown> | undefined, path = 'harnessOptions'): ClaudeCodeOptions {
  return check(RULES['claude-code'], value, path) as ClaudeCodeOptions;
}

export function parseCodexOptions(value: Record<string, unknown> | undefined, path = 'harnessOptions'): CodexOptions {
  return check(RULES.codex, value, path) as CodexOptions;
}

export function parseChatOptions(value: Record<string, unknown> | undefined, path = 'harnessOptions'): ChatOptions {
  return check(RULES.chat, value, path) as ChatOptions;
}

/** Throws `ProtocolError` naming the field; the demo harness's options are already parsed by the protocol. */
export function validateHarnessOptions(harness: HarnessName, value: Record<string, unknown> | undefined): void {
  if (harness === 'claude-code') parseClaudeCodeOptions(value);
  else if (harness === 'codex') parseCodexOptions(value);
  else if (harness === 'chat') parseChatOptions(value);
}

const OPENAI_MODEL = /^(?:gpt-|o\d|chatgpt-)/;

/**
 * Which API the `chat` harness calls: the explicit option, else the one the
 * model id belongs to, else whichever key is configured (Anthropic first).
 */
export function resolveChatProvider(model: string | undefined, options: ChatOptions, env: Record<string, string | undefined>): ChatProvider {
  if (options.provider !== undefined) return options.provider;
  if (model !== undefined) return OPENAI_MODEL.test(model) ? 'openai' : 'anthropic';
  if (!env.ANTHROPIC_API_KEY && env.OPENAI_API_KEY) return 'openai';
  return 'anthropic';
}
