import type { ModelMessage } from '@tanstack/ai';
import { parseHarnessOptions, resolveChatProvider } from '../../../src/protocol/index.ts';
import { checkHarness } from '../availability.ts';
import { pipeChatStream } from './chat-stream.ts';
import { hostChatTools } from './chat-tools.ts';
import type { HarnessContext } from './types.ts';

const DEFAULT_MODELS = { anthropic: 'claude-sonnet-4-6', openai: 'gpt-5.1' } as const;

/**
 * A plain `chat()` loop against the Anthropic or OpenAI API, no sandbox. The
 * provider adapters read ANTHROPIC_API_KEY / OPENAI_API_KEY from the environment.
 * The run's host tools are its only tools: the relay executes each call.
 */
export async function runChat(ctx: HarnessContext): Promise<void> {
  const { request, env } = ctx;
  const options = parseHarnessOptions('chat', request.harnessOptions, { allowUnsafe: true }) ?? {};
  const provider = resolveChatProvider(request.model, options, (p) => checkHarness('chat', env, { harnessOptions: { provider: p } }).ok);
  const { chat } = await import('@tanstack/ai');
  // Model ids are typed to each adapter's known list; the API is the judge of an id it does not know.
  const adapter =
    provider === 'anthropic'
      ? (await import('@tanstack/ai-anthropic')).anthropicText((request.model ?? DEFAULT_MODELS.anthropic) as typeof DEFAULT_MODELS.anthropic)
      : (await import('@tanstack/ai-openai')).openaiText((request.model ?? DEFAULT_MODELS.openai) as typeof DEFAULT_MODELS.openai);
  const stream = chat({
    adapter,
    messages: request.messages as unknown as ModelMessage[],
    runId: request.runId,
    threadId: request.threadId,
    ...(options.systemPrompt !== undefined ? { systemPrompts: [options.systemPrompt] } : {}),
    ...(ctx.tools !== undefined ? { tools: hostChatTools(ctx.tools) } : {}),
  });
  await pipeChatStream(stream, ctx);
}
