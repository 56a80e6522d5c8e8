import { describe, expect, it } from 'vitest';
import { compactForTranscript } from '../../src/thread/compact.ts';
import { foldRun } from '../../src/thread/transcript.ts';
import argsDeltas from '../fixtures/chunks/args-deltas.json';
import claudeCode from '../fixtures/chunks/claude-code-interleaved.json';
import demo from '../fixtures/chunks/demo-harness.json';
import failedRun from '../fixtures/chunks/failed-run.json';
import replayedMidCall from '../fixtures/chunks/replayed-mid-call.json';
import truncatedArgs from '../fixtures/chunks/truncated-args.json';

const user = [{ role: 'user' as const, content: 'hi' }];

describe('compactForTranscript', () => {
  it.each([
    ['demo', demo],
    ['claude-code', claudeCode],
    ['args deltas', argsDeltas],
    ['failed run', failedRun],
    ['replayed mid-call', replayedMidCall],
    ['truncated args', truncatedArgs],
  ])('folds to the same transcript as the full chunk list (%s)', (_name, chunks) => {
    const full = chunks as unknown[];
    expect(foldRun([], { userMessages: user, chunks: compactForTranscript(full) })).toEqual(foldRun([], { userMessages: user, chunks: full }));
  });

  it('merges consecutive deltas of one message and drops chunks a transcript does not use', () => {
    const compacted = compactForTranscript([
      { type: 'RUN_STARTED', runId: 'r', threadId: 't' },
      { type: 'TEXT_MESSAGE_START', messageId: 'm' },
      ...Array.from({ length: 1000 }, (_, i) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `${i % 10}` })),
      { type: 'REASONING_MESSAGE_CONTENT', messageId: 'r1', delta: 'thinking' },
      { type: 'TEXT_MESSAGE_END', messageId: 'm' },
      { type: 'RUN_FINISHED', runId: 'r', threadId: 't' },
    ]);
    expect(compacted.map((c) => c.type)).toEqual(['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END']);
    expect(compacted[1]!.delta).toBe('0123456789'.repeat(100));
  });
});
