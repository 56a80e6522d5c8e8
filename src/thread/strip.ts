import type { ModelMessage } from '@tanstack/ai';
import { isSandboxToolCall } from './transcript.ts';

function hasContent(message: ModelMessage): boolean {
  const { content } = message;
  return typeof content === 'string' ? content !== '' : Array.isArray(content) && content.length > 0;
}

/** `metadata` without the observed marker, or nothing when that was all it held. */
function unmarked(metadata: ModelMessage['metadata']): Pick<ModelMessage, 'metadata'> {
  if (typeof metadata !== 'object' || metadata === null) return {};
  const { sandboxObserved: _, ...rest } = metadata;
  return Object.keys(rest).length > 0 ? { metadata: rest } : {};
}

/**
 * The transcript as the next turn's request: the harness's tool calls ran in
 * its sandbox, so the relay's provider has no such tools and must not see them.
 *
 * - An observed call is removed from its assistant message; unobserved calls stay.
 * - An assistant message left with no calls keeps its text, as a plain text
 *   message (TanStack AI writes the text before a call on the call's message),
 *   and is dropped only when it has no content either.
 * - A `role: 'tool'` result of a removed call is dropped, since providers reject
 *   a result whose call is gone; results of unobserved calls stay.
 *
 * Returns a new array; messages that change are copied, never mutated.
 */
export function stripObservedToolCalls(messages: readonly ModelMessage[]): ModelMessage[] {
  const dropped = new Set<string>();
  const out: ModelMessage[] = [];
  for (const message of messages) {
    if (message.role === 'tool') {
      const orphan = message.toolCallId !== undefined && dropped.has(message.toolCallId);
      if (!orphan && !isSandboxToolCall(message)) out.push(message);
      continue;
    }
    const calls = message.toolCalls ?? [];
    if (!calls.some(isSandboxToolCall)) {
      out.push(message);
      continue;
    }
    const kept = calls.filter((call) => {
      if (isSandboxToolCall(call)) dropped.add(call.id);
      return !isSandboxToolCall(call);
    });
    const { toolCalls: _, metadata, ...rest } = message;
    const stripped: ModelMessage = { ...rest, ...unmarked(metadata) };
    if (kept.length > 0) out.push({ ...stripped, toolCalls: kept });
    else if (hasContent(message)) out.push(stripped);
  }
  return out;
}
