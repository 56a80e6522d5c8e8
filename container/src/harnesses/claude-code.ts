import type { ModelMessage } from '@tanstack/ai';
import { parseClaudeCodeOptions } from '../harness-options.ts';
import { pipeChatStream } from './chat-stream.ts';
import { localSandbox } from './local-sandbox.ts';
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
  const options = parseClaudeCodeOptions(request.harnessOptions);
  const [{ chat }, { claudeCodeText }, sandbox] = await Promise.all([
    import('@tanstack/ai'),
    import('@tanstack/ai-claude-code'),
    localSandbox(request),
  ]);
  const adapter = claudeCodeText(request.model ?? DEFAULT_MODEL, {
    ...(options.maxTurns !== undefined ? { maxTurns: options.maxTurns } : {}),
    ...(options.permissionMode !== undefined ? { permissionMode: options.permissionMode } : {}),
  });
  const stream = chat({
    adapter,
    // Same JSON on the wire; the relay's and the adapter's `@tanstack/ai` releases only differ in type identity.
    messages: request.messages as unknown as ModelMessage[],
    runId: request.runId,
    threadId: request.threadId,
    middleware: [sandbox],
    ...(options.sessionId !== undefined ? { modelOptions: { sessionId: options.sessionId } } : {}),
  });
  await pipeChatStream(stream, ctx);
}
