import { SAFE_HARNESS_DEFAULTS, parseHarnessOptions } from '../../../src/protocol/index.ts';
import { codexTap } from './cli-events.ts';
import { pipeSandboxedAgent } from './local-sandbox.ts';
import type { HarnessContext } from './types.ts';

const DEFAULT_MODEL = 'gpt-5.3-codex';

/**
 * Codex through `@tanstack/ai-codex` (`codex exec --experimental-json`).
 * `codex exec` authenticates with CODEX_API_KEY; when only OPENAI_API_KEY is
 * configured it is handed over under that name, in the CLI's environment only.
 */
export async function runCodex(ctx: HarnessContext): Promise<void> {
  const { request, env } = ctx;
  const options = parseHarnessOptions('codex', request.harnessOptions, { allowUnsafe: true }) ?? {};
  const { codexText } = await import('@tanstack/ai-codex');
  const apiKey = env.CODEX_API_KEY?.trim() ? undefined : env.OPENAI_API_KEY?.trim();
  const adapter = codexText(request.model ?? DEFAULT_MODEL, {
    ...(apiKey ? { env: { CODEX_API_KEY: apiKey } } : {}),
    // Always explicit, never the adapter's default.
    sandboxMode: options.sandboxMode ?? SAFE_HARNESS_DEFAULTS.codex.sandboxMode,
    ...(options.modelReasoningEffort !== undefined ? { modelReasoningEffort: options.modelReasoningEffort } : {}),
  });
  await pipeSandboxedAgent(ctx, adapter, options.sessionId, codexTap());
}
