import { SAFE_HARNESS_DEFAULTS, parseHarnessOptions } from '../../../src/protocol/index.ts';
import { codexTap } from './cli-events.ts';
import { pipeSandboxedAgent } from './local-sandbox.ts';
import type { HarnessContext } from './types.ts';

const DEFAULT_MODEL = 'gpt-5.3-codex';

/**
 * Codex through `@tanstack/ai-codex` (`codex exec --experimental-json`).
 * `codex exec` authenticates with CODEX_API_KEY; when only OPENAI_API_KEY is
 * configured it is handed over under that name, in the CLI's environment only.
 * OPENAI_BASE_URL (e.g. a Cloudflare AI Gateway URL) becomes `openai_base_url`.
 */
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

export async function runCodex(ctx: HarnessContext): Promise<void> {
  const { request, env } = ctx;
  const options = parseHarnessOptions('codex', request.harnessOptions, { allowUnsafe: true }) ?? {};
  const { codexText } = await import('@tanstack/ai-codex');
  const apiKey = env.CODEX_API_KEY?.trim() ? undefined : env.OPENAI_API_KEY?.trim();
  const baseUrl = codexBaseUrl(env.OPENAI_BASE_URL);
  const adapter = codexText(request.model ?? DEFAULT_MODEL, {
    ...(apiKey ? { env: { CODEX_API_KEY: apiKey } } : {}),
    ...(baseUrl !== undefined ? { config: { openai_base_url: `"${baseUrl}"` } } : {}),
    // Always explicit, never the adapter's default.
    sandboxMode: options.sandboxMode ?? SAFE_HARNESS_DEFAULTS.codex.sandboxMode,
    ...(options.modelReasoningEffort !== undefined ? { modelReasoningEffort: options.modelReasoningEffort } : {}),
  });
  await pipeSandboxedAgent(ctx, adapter, options.sessionId, codexTap());
}
