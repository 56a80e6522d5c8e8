import type { ModelMessage } from '@tanstack/ai';
import { ProtocolError } from './errors.ts';
import { MAX_JSON_DEPTH, isObject, sanitizeJson } from './json.ts';

const ROLES = ['user', 'assistant', 'tool', 'system'] as const;

/** Enough messages for a long conversation; more in one request is a client bug, not a transcript. */
export const MAX_MESSAGES = 1_000;

export interface ParseMessagesOptions {
  /** Default `MAX_MESSAGES`, the bound for a request; a stored transcript has its own. */
  maxMessages?: number;
  /**
   * `request` (default): a reserved key anywhere is a 400 naming the field.
   * `trusted`: what the relay stored or its runner sent, where a model's tool
   * input may legitimately use such a key; it stays plain data.
   */
  source?: 'request' | 'trusted';
}

/**
 * Validates the shape the runner relies on (role, content) and copies the
 * rest of each message as plain data (own properties, null-prototype
 * objects): `toolCalls`, `toolCallId` and `metadata` belong to TanStack AI and
 * are checked by the harness that reads them.
 */
export function parseMessages(value: unknown, path = 'messages', options: ParseMessagesOptions = {}): ModelMessage[] {
  const maxMessages = options.maxMessages ?? MAX_MESSAGES;
  const sanitize = options.source === 'trusted' ? { rejectReserved: false, maxDepth: Number.POSITIVE_INFINITY } : { rejectReserved: true, maxDepth: MAX_JSON_DEPTH };
  if (!Array.isArray(value)) throw new ProtocolError(path, 'expected an array of messages');
  if (value.length === 0) throw new ProtocolError(path, 'expected at least one message');
  if (value.length > maxMessages) throw new ProtocolError(path, `expected at most ${maxMessages} messages`);
  return value.map((item: unknown, i) => {
    const at = `${path}[${i}]`;
    if (!isObject(item)) throw new ProtocolError(at, 'expected an object');
    const message = sanitizeJson(item, at, sanitize) as Record<string, unknown>;
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
