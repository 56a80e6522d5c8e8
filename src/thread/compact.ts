import { HOST_TOOL_CALL_EVENT, isObject } from '../protocol/index.ts';

/**
 * What a run sends its thread when it ends: only the chunks a transcript is
 * folded from, with each run of consecutive text deltas of one message merged
 * into one delta. The fold concatenates a message's deltas in order, so the
 * merge changes nothing it computes, while a long run's payload shrinks from
 * one object per token to roughly its text.
 */

const TRANSCRIPT_CHUNK_TYPES = new Set([
  'TEXT_MESSAGE_START',
  'TEXT_MESSAGE_CONTENT',
  'TEXT_MESSAGE_END',
  'TOOL_CALL_START',
  'TOOL_CALL_ARGS',
  'TOOL_CALL_END',
  'TOOL_CALL_RESULT',
]);

type Fields = Record<string, unknown>;

/** A plain delta: no accumulated `content` that the fold would prefer over the deltas. */
function plainDelta(chunk: Fields): chunk is Fields & { messageId: string; delta: string } {
  return chunk.type === 'TEXT_MESSAGE_CONTENT' && typeof chunk.messageId === 'string' && typeof chunk.delta === 'string' && chunk.content === undefined;
}

export function compactForTranscript(chunks: Iterable<unknown>): Fields[] {
  const out: Fields[] = [];
  for (const chunk of chunks) {
    if (!isObject(chunk) || typeof chunk.type !== 'string') continue;
    // A host tool call's request says the call ran through the relay: the fold does not mark it sandbox-observed.
    const hostCall = chunk.type === 'CUSTOM' && chunk.name === HOST_TOOL_CALL_EVENT;
    if (!hostCall && !TRANSCRIPT_CHUNK_TYPES.has(chunk.type)) continue;
    const last = out[out.length - 1];
    if (last && plainDelta(chunk) && plainDelta(last) && last.messageId === chunk.messageId) {
      out[out.length - 1] = { ...last, delta: last.delta + chunk.delta };
      continue;
    }
    out.push(chunk);
  }
  return out;
}
