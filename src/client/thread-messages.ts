import type { Transcript, TranscriptItem } from './transcript.ts';

/**
 * A thread's finished turns, as `GET /threads/:id/messages` serves them
 * (TanStack AI `ModelMessage`s), turned into the transcript items a live run
 * folds into, so a reloaded conversation renders like the one that streamed.
 *
 * - A user or assistant message with text is a `text` item; its `id` is kept
 *   (the relay stores the streamed `messageId`), else one is made from its place.
 * - Each of an assistant message's `toolCalls` is a `tool` item; a later
 *   `role: 'tool'` message fills in its result (its `error`, when it has one).
 * - A result whose call is not in the transcript is still shown, as a call named `tool`.
 *
 * Reasoning and run errors are not in a transcript, so they are not here either.
 * The input comes off the wire: every field is checked, anything else is skipped.
 */
type Fields = Record<string, unknown>;
type ToolItem = Extract<TranscriptItem, { kind: 'tool' }>;

const isFields = (value: unknown): value is Fields => typeof value === 'object' && value !== null && !Array.isArray(value);
const nonEmpty = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/** A message's text: the string, or its text parts joined (images and other parts have none to show). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part) => (isFields(part) && part.type === 'text' && typeof part.content === 'string' ? part.content : '')).join('');
}

/** A result as `applyChunk` keeps one: a string as is, anything else as JSON text. */
function resultOf(message: Fields): string {
  if (typeof message.error === 'string' && message.error !== '') return message.error;
  if (typeof message.content === 'string') return message.content;
  return JSON.stringify(message.content ?? null);
}

/**
 * @example
 * ```ts
 * const { messages } = await (await fetch(`/threads/${threadId}/messages`)).json();
 * for (const item of transcriptFromMessages(messages).items) view.update(item);
 * ```
 */
export function transcriptFromMessages(messages: unknown): Transcript {
  const items: TranscriptItem[] = [];
  if (!Array.isArray(messages)) return { items, lastSeq: -1 };
  const calls = new Map<string, ToolItem>();
  const usedIds = new Set<string>();
  /** Ids are what a view keys its elements by: two items never share one. */
  const idFor = (wanted: string | null, fallback: string) => {
    const id = wanted !== null && !usedIds.has(wanted) ? wanted : fallback;
    usedIds.add(id);
    return id;
  };

  messages.forEach((message: unknown, index) => {
    if (!isFields(message)) return;
    const { role } = message;
    if (role === 'user' || role === 'assistant') {
      const text = textOf(message.content);
      if (text !== '') items.push({ kind: 'text', id: idFor(nonEmpty(message.id), `${role}-${index}`), role, text, streaming: false });
      if (role === 'assistant' && Array.isArray(message.toolCalls)) {
        message.toolCalls.forEach((call: unknown, n) => {
          if (!isFields(call) || !isFields(call.function)) return;
          const id = nonEmpty(call.id) ?? `call-${index}-${n}`;
          if (calls.has(id)) return;
          const args = typeof call.function.arguments === 'string' ? call.function.arguments : '';
          const item: ToolItem = { kind: 'tool', id, name: nonEmpty(call.function.name) ?? 'tool', args, result: null, streaming: false };
          calls.set(id, item);
          items.push(item);
        });
      }
    } else if (role === 'tool') {
      const id = nonEmpty(message.toolCallId) ?? `result-${index}`;
      const call = calls.get(id);
      if (call) call.result ??= resultOf(message);
      else {
        const orphan: ToolItem = { kind: 'tool', id, name: 'tool', args: '', result: resultOf(message), streaming: false };
        calls.set(id, orphan);
        items.push(orphan);
      }
    }
  });
  return { items, lastSeq: -1 };
}
