import { SAFE_HARNESS_DEFAULTS, parseHarnessOptions } from '../../../src/protocol/index.ts';
import { claudeCodeTap } from './cli-events.ts';
import { pipeSandboxedAgent } from './local-sandbox.ts';
import type { HarnessContext } from './types.ts';

/** The CLI resolves the alias to its current Sonnet model. */
const DEFAULT_MODEL = 'sonnet';

/**
 * Claude Code through `@tanstack/ai-claude-code`: the adapter runs `claude -p
 * --output-format stream-json` in the sandbox and translates its events to
 * AG-UI chunks. The CLI reads ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN)
 * from the environment it inherits; nothing here passes a key.
 */
export async function runClaudeCode(ctx: HarnessContext): Promise<void> {
  const { request } = ctx;
  // Checked by the Worker, which owns the unsafe-options policy; the schema is checked again here.
  const options = parseHarnessOptions('claude-code', request.harnessOptions, { allowUnsafe: true }) ?? {};
  const { claudeCodeText } = await import('@tanstack/ai-claude-code');
  const adapter = claudeCodeText(request.model ?? DEFAULT_MODEL, {
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    // Always explicit: the adapter's own default is bypassPermissions.
    permissionMode: options.permissionMode ?? SAFE_HARNESS_DEFAULTS['claude-code'].permissionMode,
  });
  await pipeSandboxedAgent(ctx, adapter, options.sessionId, claudeCodeTap());
}
