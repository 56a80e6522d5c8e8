import type { StreamChunk } from '@tanstack/ai';
import { describe, expect, it } from 'vitest';
import { applyChunk, emptyTranscript, parseTranscript, type Transcript } from '../../src/client/transcript.ts';
import argsDeltas from '../fixtures/chunks/args-deltas.json';
import claudeCode from '../fixtures/chunks/claude-code-interleaved.json';
import demo from '../fixtures/chunks/demo-harness.json';
import failedRun from '../fixtures/chunks/failed-run.json';
import nonStringResult from '../fixtures/chunks/non-string-result.json';
import replayedMidCall from '../fixtures/chunks/replayed-mid-call.json';
import truncatedArgs from '../fixtures/chunks/truncated-args.json';

/** The client's view model (src/client/transcript.ts), fed the recorded runs the server-side fold is tested with. */
function fold(chunks: readonly unknown[], into: Transcript = emptyTranscript(), firstSeq = 0): Transcript {
  chunks.forEach((chunk, i) => applyChunk(into, chunk as StreamChunk, firstSeq + i));
  return into;
}

const texts = (t: Transcript) => t.items.flatMap((item) => (item.kind === 'text' ? [item.text] : []));
const tools = (t: Transcript) => t.items.flatMap((item) => (item.kind === 'tool' ? [{ name: item.name, args: JSON.parse(item.args), result: item.result }] : []));

describe('applyChunk', () => {
  it('folds the demo run: reasoning, one text per message, the tool call with its result', () => {
    const t = fold(demo);
    expect(t.items.map((item) => item.kind)).toEqual(['reasoning', 'text', 'tool', 'text']);
    expect(t.items[0]).toMatchObject({ text: 'The prompt has 3 words. I will stream 3 text deltas, then call count_words.', streaming: false });
    expect(texts(t)[0]).toBe('[0] count these [1] count these [2] count these ');
    expect(tools(t)).toEqual([{ name: 'count_words', args: { text: 'count these words' }, result: '{"words":3}' }]);
    expect(t.lastSeq).toBe(demo.length - 1);
  });

  it('ignores a seq it already folded, so a replayed tail cannot duplicate text', () => {
    const once = fold(demo);
    const twice = fold(demo, fold(demo.slice(0, 12)));
    expect(twice).toEqual(once);
    expect(applyChunk(once, demo[10] as StreamChunk, 10)).toBe(-1);
  });

  it('stitches each call\'s argument deltas', () => {
    expect(tools(fold(argsDeltas))).toEqual([
      { name: 'bash', args: { command: 'ls -la' }, result: 'total 0' },
      { name: 'bash', args: { command: 'pwd' }, result: '/workspace' },
    ]);
  });

  it('restarts a message and a call that a resuming harness re-emits', () => {
    const t = fold(replayedMidCall);
    expect(texts(t)).toEqual(['Checking.']);
    expect(tools(t)).toEqual([{ name: 'bash', args: { command: 'date' }, result: 'Mon' }]);
  });

  it('takes TOOL_CALL_END input over cut-short deltas, and shows a non-string result as JSON', () => {
    expect(tools(fold(truncatedArgs))[0]!.args).toEqual({ path: 'notes.md', content: '# Notes\n' });
    expect(tools(fold(nonStringResult))[0]!.result).toBe('{"files":["a.ts","b.ts"]}');
  });

  it('keeps interleaved calls apart and ends a failed run with its error', () => {
    const cc = fold(claudeCode);
    expect(new Set(tools(cc).map((call) => call.name)).size).toBeGreaterThan(1);
    const failed = fold(failedRun);
    expect(failed.items.at(-1)).toEqual({ kind: 'error', id: `error-${failedRun.length - 1}`, message: 'The runner is gone.', code: 'runner_lost' });
    expect(failed.items.filter((item) => item.kind === 'tool' && item.streaming).map((item) => item.id)).toEqual(['call_3']);
  });
});

describe('parseTranscript', () => {
  it('round-trips through JSON and refuses what is not a transcript', () => {
    const t = fold(demo);
    expect(parseTranscript(JSON.parse(JSON.stringify(t)))).toEqual(t);
    expect(parseTranscript(null)).toBeNull();
    expect(parseTranscript({ items: [], lastSeq: -2 })).toBeNull();
    expect(parseTranscript({ items: [{ kind: 'video', id: 'x' }], lastSeq: 0 })).toBeNull();
  });
});
