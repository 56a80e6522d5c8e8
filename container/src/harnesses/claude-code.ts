import { APPROVAL_TOOL_NAME, SAFE_HARNESS_DEFAULTS, parseHarnessOptions } from '../../../src/protocol/index.ts';
import { claudeCodeTap } from './cli-events.ts';
import { ClientApprovals } from './client-approvals.ts';
import { BridgedHostTools } from './host-tool-bridge.ts';
import { pipeSandboxedAgent } from './local-sandbox.ts';
import type { HarnessContext } from './types.ts';

/** The CLI resolves the alias to its current Sonnet model. */
const DEFAULT_MODEL = 'sonnet';

/**
 * Claude Code through `@tanstack/ai-claude-code`: the adapter runs `claude -p
 * --output-format stream-json` in the sandbox and translates its events to
 * AG-UI chunks. The CLI reads ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN)
 * from the environment it inherits; nothing here passes a key. The run's host
 * tools reach it through the adapter's MCP bridge (`--mcp-config`), as
 * `mcp__tanstack__<name>`; the adapter strips the prefix from its chunks.
 * With `approvals: 'client'` the CLI's permission prompts go to a person
 * (client-approvals.ts); the allow rules above name the host tools only, so
 * the CLI's own tools still ask.
 */
export async function runClaudeCode(ctx: HarnessContext): Promise<void> {
  const { request } = ctx;
  // Checked by the Worker, which owns the unsafe-options policy; the schema is checked again here.
  const options = parseHarnessOptions('claude-code', request.harnessOptions, { allowUnsafe: true }) ?? {};
  const [{ claudeCodeText }, { BRIDGED_MCP_SERVER_NAME }] = await Promise.all([import('@tanstack/ai-claude-code'), import('@tanstack/ai-sandbox')]);
  const hostTools = ctx.tools !== undefined && ctx.tools.descriptors.length > 0 ? new BridgedHostTools(ctx.tools) : undefined;
  const adapter = claudeCodeText(request.model ?? DEFAULT_MODEL, {
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    // Always explicit: the adapter's own default is bypassPermissions.
    permissionMode: options.permissionMode ?? SAFE_HARNESS_DEFAULTS['claude-code'].permissionMode,
    // The app gave these tools to the run, so they need no prompt: in every mode but
    // bypassPermissions, `claude -p` refuses an MCP tool that no allow rule names.
    ...(hostTools !== undefined ? { allowedTools: hostTools.names.map((name) => `mcp__${BRIDGED_MCP_SERVER_NAME}__${name}`) } : {}),
  });
  const approvals = request.approvals === 'client' && ctx.tools?.has(APPROVAL_TOOL_NAME) === true ? new ClientApprovals(ctx.tools, ctx.writer) : undefined;
  await pipeSandboxedAgent(ctx, adapter, { sessionId: options.sessionId, tap: claudeCodeTap(), ...(hostTools !== undefined ? { hostTools } : {}), ...(approvals !== undefined ? { approvals } : {}) });
}
