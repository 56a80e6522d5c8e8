import type { ModelMessage, StreamChunk } from '@tanstack/ai';
import { describe, expect, it } from 'vitest';
import { transcriptFromMessages } from '../../src/client/thread-messages.ts';
import { applyChunk, emptyTranscript, type Transcript, type TranscriptItem } from '../../src/client/transcript.ts';
import { foldRun } from '../../src/thread/transcript.ts';
import argsDeltas from '../fixtures/chunks/args-deltas.json';
import claudeCode from '../fixtures/chunks/claude-code-interleaved.json';
import demo from '../fixtures/chunks/demo-harness.json';

/**
 * A reloaded conversation (the thread's transcript read back by the page)
 * must show what the live tail showed: the same texts under the same ids, the
 * same calls with their arguments and results. Reasoning and run errors are
 * not kept in a transcript, so they are the only difference.
 */
function live(chunks: readonly unknown[]): Transcript {
  const transcript = emptyTranscript();
  chunks.forEach((chunk, seq) => applyChunk(transcript, chunk as StreamChunk, seq));
  return transcript;
}

/** What a page compares: kind, id, text or call, result; no streaming flags. */
type Shown = { kind: 'text'; id: string; role: string; text: string } | { kind: 'tool'; id: string; name: string; args: unknown; result: string | null };

function shown(items: readonly TranscriptItem[]): Shown[] {
  return items.flatMap((item): Shown[] => {
    if (item.kind === 'text') return [{ kind: 'text', id: item.id, role: item.role, text: item.text }];
    if (item.kind === 'tool') return [{ kind: 'tool', id: item.id, name: item.name, args: JSON.parse(item.args) as unknown, result: item.result }];
    return [];
  });
}

const user = (content: string): ModelMessage => ({ role: 'user', content });

describe('transcriptFromMessages', () => {
  it.each([
    ['the demo run', demo],
    ['calls with argument deltas', argsDeltas],
    ['claude-code, calls interleaved', claudeCode],
  ])('shows %s as the live tail showed it, after the prompt', (_name, chunks) => {
    const messages = foldRun([], { userMessages: [user('count these words')], chunks });
    const reloaded = transcriptFromMessages(JSON.parse(JSON.stringify(messages)));
    const [prompt, ...rest] = shown(reloaded.items);
    expect(prompt).toEqual({ kind: 'text', id: 'user-0', role: 'user', text: 'count these words' });
    expect(rest).toEqual(shown(live(chunks).items));
    expect(reloaded.lastSeq).toBe(-1);
  });

  it('keeps two turns in order, each turn under its own ids', () => {
    const first = foldRun([], { userMessages: [user('one')], chunks: demo });
    const both = foldRun(first, { userMessages: [user('two')], chunks: argsDeltas });
    const items = transcriptFromMessages(both).items;
    const prompts = items.filter((item) => item.kind === 'text' && item.role === 'user');
    expect(prompts.map((item) => (item as { text: string }).text)).toEqual(['one', 'two']);
    expect(items.indexOf(prompts[1]!)).toBe(transcriptFromMessages(first).items.length);
    expect(new Set(items.map((item) => `${item.kind}:${item.id}`)).size).toBe(items.length);
  });

  it('reads text parts, a tool error, a result whose call is gone, and skips what is not a message', () => {
    const items = transcriptFromMessages([
      { role: 'user', content: [{ type: 'text', content: 'look at ' }, { type: 'image', source: { type: 'url', value: 'x' } }, { type: 'text', content: 'this' }] },
      { role: 'assistant', content: null, toolCalls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a"}' } }] },
      { role: 'tool', toolCallId: 'c1', content: '', error: 'ENOENT' },
      { role: 'tool', toolCallId: 'c9', content: { lines: 2 } },
      'not a message',
      { role: 'system', content: 'ignored' },
      { role: 'assistant', content: 'done', id: 'm1' },
      { role: 'assistant', content: 'again', id: 'm1' },
    ]).items;
    expect(items).toEqual([
      { kind: 'text', id: 'user-0', role: 'user', text: 'look at this', streaming: false },
      { kind: 'tool', id: 'c1', name: 'read', args: '{"path":"a"}', result: 'ENOENT', streaming: false },
      { kind: 'tool', id: 'c9', name: 'tool', args: '', result: '{"lines":2}', streaming: false },
      { kind: 'text', id: 'm1', role: 'assistant', text: 'done', streaming: false },
      { kind: 'text', id: 'assistant-7', role: 'assistant', text: 'again', streaming: false },
    ]);
    expect(transcriptFromMessages({ messages: [] }).items).toEqual([]);
  });
});
