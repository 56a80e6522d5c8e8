import { SAFE_HARNESS_DEFAULTS, parseHarnessOptions } from '../../../src/protocol/index.ts';
import { codexTap } from './cli-events.ts';
import { BridgedHostTools } from './host-tool-bridge.ts';
import { pipeSandboxedAgent } from './local-sandbox.ts';
import type { HarnessContext } from './types.ts';

const DEFAULT_MODEL = 'gpt-5.3-codex';

/**
 * Codex gives up on an MCP tool call after `tool_timeout_sec`, 60 s by
 * default: less than one webhook's retries, and far less than a client tool's
 * wait. The run object answers every call (its own timeouts are error
 * results) and RUN_MAX_SECONDS bounds the run, so the CLI's limit must never
 * be the one that ends a call. (Claude Code's default is 10^8 ms.)
 */
const HOST_TOOL_TIMEOUT_SEC = 86_400;

/**
 * The bridged server's settings beside the URL and bearer header the adapter
 * gives it. Under `approval_policy = "never"` (the adapter's default) codex
 * 0.171.0 fails every MCP call ("MCP tool call requires approval, but
 * approval policy is never") unless the server's tools are approved: the app
 * gave the run these tools, so they need no prompt.
 */
function bridgedServerConfig(server: string): Record<string, string> {
  return { [`mcp_servers.${server}.default_tools_approval_mode`]: '"approve"', [`mcp_servers.${server}.tool_timeout_sec`]: String(HOST_TOOL_TIMEOUT_SEC) };
}

/**
 * OPENAI_BASE_URL as `codex exec` takes it: the CLI ignores the variable and
 * follows only `-c openai_base_url="…"`, which the adapter pastes into TOML
 * unescaped. So only a parsed http(s) URL goes in, and none that holds a quote
 * or a backslash (`URL` percent-encodes the rest).
 */
export function codexBaseUrl(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    throw new Error('OPENAI_BASE_URL is not a URL');
  }
  if ((url.protocol !== 'https:' && url.protocol !== 'http:') || /["\\]/.test(url.href)) throw new Error('OPENAI_BASE_URL must be an http(s) URL');
  return url.href.replace(/\/$/, '');
}

/**
 * Codex through `@tanstack/ai-codex` (`codex exec --experimental-json`).
 * `codex exec` authenticates with CODEX_API_KEY; when only OPENAI_API_KEY is
 * configured it is handed over under that name, in the CLI's environment only.
 * OPENAI_BASE_URL (e.g. a Cloudflare AI Gateway URL) becomes `openai_base_url`.
 * The run's host tools reach it through the adapter's MCP bridge
 * (`mcp_servers.tanstack`, a streamable-HTTP server with a bearer header).
 */
export async function runCodex(ctx: HarnessContext): Promise<void> {
  const { request, env } = ctx;
  const options = parseHarnessOptions('codex', request.harnessOptions, { allowUnsafe: true }) ?? {};
  const [{ codexText }, { BRIDGED_MCP_SERVER_NAME }] = await Promise.all([import('@tanstack/ai-codex'), import('@tanstack/ai-sandbox')]);
  const apiKey = env.CODEX_API_KEY?.trim() ? undefined : env.OPENAI_API_KEY?.trim();
  const baseUrl = codexBaseUrl(env.OPENAI_BASE_URL);
  const hostTools = ctx.tools !== undefined && ctx.tools.descriptors.length > 0 ? new BridgedHostTools(ctx.tools) : undefined;
  const config = {
    ...(baseUrl !== undefined ? { openai_base_url: `"${baseUrl}"` } : {}),
    // Set only beside the bridge the adapter configures (`mcp_servers.tanstack.url`): alone it would be a server with no transport.
    ...(hostTools !== undefined ? bridgedServerConfig(BRIDGED_MCP_SERVER_NAME) : {}),
  };
  const adapter = codexText(request.model ?? DEFAULT_MODEL, {
    ...(apiKey ? { env: { CODEX_API_KEY: apiKey } } : {}),
    ...(Object.keys(config).length > 0 ? { config } : {}),
    // Always explicit, never the adapter's default.
    sandboxMode: options.sandboxMode ?? SAFE_HARNESS_DEFAULTS.codex.sandboxMode,
    ...(options.modelReasoningEffort !== undefined ? { modelReasoningEffort: options.modelReasoningEffort } : {}),
  });
  await pipeSandboxedAgent(ctx, adapter, { sessionId: options.sessionId, tap: codexTap(request.runId), ...(hostTools !== undefined ? { hostTools } : {}) });
}
