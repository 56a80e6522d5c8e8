import type { ModelMessage } from '@tanstack/ai';
import { ProtocolError } from './errors.ts';
import { isObject } from './json.ts';

const ROLES = ['user', 'assistant', 'tool', 'system'] as const;

/** Enough messages for a long conversation; more is a client bug, not a transcript. */
export const MAX_MESSAGES = 1_000;

/**
 * Validates the shape the runner relies on (role, content) and passes the rest
 * of each message through: `toolCalls`, `toolCallId` and `metadata` belong to
 * TanStack AI and are checked by the harness that reads them.
 */
export function parseMessages(value: unknown, path = 'messages'): ModelMessage[] {
  if (!Array.isArray(value)) throw new ProtocolError(path, 'expected an array of messages');
  if (value.length === 0) throw new ProtocolError(path, 'expected at least one message');
  if (value.length > MAX_MESSAGES) throw new ProtocolError(path, `expected at most ${MAX_MESSAGES} messages`);
  return value.map((message, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(message)) throw new ProtocolError(at, 'expected an object');
    if (typeof message.role !== 'string' || !(ROLES as readonly string[]).includes(message.role)) {
      throw new ProtocolError(`${at}.role`, `expected one of ${ROLES.join(', ')}`);
    }
    const content = message.content;
    if (content !== null && typeof content !== 'string' && !Array.isArray(content)) {
      throw new ProtocolError(`${at}.content`, 'expected a string, null or an array of content parts');
    }
    return message as unknown as ModelMessage;
  });
}
