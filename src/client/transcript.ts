import type { StreamChunk } from '@tanstack/ai';

/**
 * A run's chunks folded into what a chat UI shows: assistant messages (text
 * deltas concatenated), reasoning, tool calls with their arguments and result,
 * and errors. Plain JSON, so a page can keep it in `sessionStorage` next to
 * `lastSeq` and resume with `attachRun({ fromSeq: transcript.lastSeq })`.
 */
export type TranscriptItem =
  | { kind: 'text'; id: string; role: string; text: string; streaming: boolean }
  | { kind: 'reasoning'; id: string; text: string; streaming: boolean }
  /** `streaming` until `TOOL_CALL_END`; `result` once `TOOL_CALL_RESULT` arrived (JSON text for a non-string result). */
  | { kind: 'tool'; id: string; name: string; args: string; result: string | null; streaming: boolean }
  | { kind: 'error'; id: string; message: string; code: string | null };

export interface Transcript {
  items: TranscriptItem[];
  /** The last seq folded in; `-1` for none. Resume the tail from here. */
  lastSeq: number;
}

export function emptyTranscript(): Transcript {
  return { items: [], lastSeq: -1 };
}

type Fields = Record<string, unknown>;
const str = (value: unknown): string | null => (typeof value === 'string' ? value : null);
const nonEmpty = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);

/**
 * Folds chunk `seq` into `transcript` (in place) and returns the index of the
 * item it created or changed, or `-1`. A seq at or below `lastSeq` is ignored,
 * so replaying a tail twice cannot duplicate text.
 *
 * @example
 * ```ts
 * const transcript = emptyTranscript();
 * attachRun({ baseUrl, runId, onChunk: (chunk, seq) => render(applyChunk(transcript, chunk, seq)) });
 * ```
 */
export function applyChunk(transcript: Transcript, chunk: StreamChunk, seq: number): number {
  if (seq <= transcript.lastSeq) return -1;
  transcript.lastSeq = seq;
  const c = chunk as unknown as Fields;
  const { items } = transcript;
  const find = (kind: TranscriptItem['kind'], id: string | null) => (id === null ? -1 : items.findIndex((item) => item.kind === kind && item.id === id));
  const add = (item: TranscriptItem) => items.push(item) - 1;
  const messageId = str(c.messageId);
  const toolCallId = str(c.toolCallId);

  switch (chunk.type) {
    case 'TEXT_MESSAGE_START':
    case 'TEXT_MESSAGE_CONTENT':
    case 'TEXT_MESSAGE_END': {
      const id = messageId ?? `text-${seq}`;
      let at = find('text', id);
      if (at === -1) at = add({ kind: 'text', id, role: str(c.role) ?? 'assistant', text: '', streaming: true });
      const item = items[at] as Extract<TranscriptItem, { kind: 'text' }>;
      if (chunk.type === 'TEXT_MESSAGE_START' && item.text !== '') {
        // A harness that resumes re-emits the message from its start.
        item.text = '';
        item.streaming = true;
      }
      if (chunk.type === 'TEXT_MESSAGE_CONTENT') item.text += str(c.delta) ?? '';
      if (chunk.type === 'TEXT_MESSAGE_END') item.streaming = false;
      return at;
    }
    case 'REASONING_MESSAGE_START':
    case 'REASONING_MESSAGE_CONTENT':
    case 'REASONING_MESSAGE_END': {
      const id = messageId ?? `reasoning-${seq}`;
      let at = find('reasoning', id);
      if (at === -1) at = add({ kind: 'reasoning', id, text: '', streaming: true });
      const item = items[at] as Extract<TranscriptItem, { kind: 'reasoning' }>;
      if (chunk.type === 'REASONING_MESSAGE_START') item.text = '';
      if (chunk.type === 'REASONING_MESSAGE_CONTENT') item.text += str(c.delta) ?? '';
      if (chunk.type === 'REASONING_MESSAGE_END') item.streaming = false;
      return at;
    }
    case 'TOOL_CALL_START':
    case 'TOOL_CALL_ARGS':
    case 'TOOL_CALL_END':
    case 'TOOL_CALL_RESULT': {
      const id = toolCallId ?? `tool-${seq}`;
      let at = find('tool', id);
      if (at === -1) at = add({ kind: 'tool', id, name: 'tool', args: '', result: null, streaming: true });
      const item = items[at] as Extract<TranscriptItem, { kind: 'tool' }>;
      const name = nonEmpty(c.toolCallName);
      if (chunk.type === 'TOOL_CALL_START' && name !== null) item.name = name;
      if (chunk.type === 'TOOL_CALL_RESULT') {
        item.result ??= str(c.content) ?? JSON.stringify(c.content ?? null);
        return at;
      }
      // A replay re-emits a call: START restarts an unfinished call's arguments; a finished call is left as it is.
      if (!item.streaming) return at;
      if (chunk.type === 'TOOL_CALL_START') item.args = '';
      if (chunk.type === 'TOOL_CALL_ARGS') item.args += str(c.delta) ?? '';
      if (chunk.type === 'TOOL_CALL_END') {
        // The parsed input (0.58's wire shape puts it in metadata.tanstack.input) wins over deltas that may be cut short.
        const input = ((c.metadata as Fields | undefined)?.tanstack as Fields | undefined)?.input;
        if (typeof input === 'object' && input !== null) item.args = JSON.stringify(input);
        item.streaming = false;
      }
      return at;
    }
    case 'RUN_ERROR':
      return add({ kind: 'error', id: `error-${seq}`, message: str(c.message) ?? 'The run failed.', code: str(c.code) });
    default:
      return -1;
  }
}

/** A transcript read back from storage, checked field by field; `null` if it is not one. */
export function parseTranscript(value: unknown): Transcript | null {
  if (typeof value !== 'object' || value === null) return null;
  const { items, lastSeq } = value as Fields;
  if (typeof lastSeq !== 'number' || !Number.isSafeInteger(lastSeq) || lastSeq < -1 || !Array.isArray(items)) return null;
  const ok = items.every((item: unknown) => {
    if (typeof item !== 'object' || item === null) return false;
    const { kind, id } = item as Fields;
    return typeof id === 'string' && (kind === 'text' || kind === 'reasoning' || kind === 'tool' || kind === 'error');
  });
  return ok ? { items: items as TranscriptItem[], lastSeq } : null;
}
