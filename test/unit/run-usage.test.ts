import { describe, expect, it } from 'vitest';
import { parseRunUsage, parseRunView, usageOfRunFinished } from '../../src/protocol/index.ts';

describe('usageOfRunFinished', () => {
  it('sums AG-UI 1.0 usage entries and keeps cache fields only where reported', () => {
    const chunk = {
      type: 'RUN_FINISHED',
      usage: [
        { provider: 'anthropic', inputTokens: 10, outputTokens: 2, cacheWriteInputTokens: 4 },
        { inputTokens: 1, outputTokens: 1 },
      ],
    };
    expect(usageOfRunFinished(chunk)).toEqual({ inputTokens: 11, outputTokens: 3, cacheWriteInputTokens: 4 });
  });

  it('answers undefined for no usage, the legacy object shape, or another chunk', () => {
    expect(usageOfRunFinished({ type: 'RUN_FINISHED' })).toBeUndefined();
    expect(usageOfRunFinished({ type: 'RUN_FINISHED', usage: { promptTokens: 1, completionTokens: 2 } })).toBeUndefined();
    expect(usageOfRunFinished({ type: 'RUN_ERROR', usage: [{ inputTokens: 1 }] })).toBeUndefined();
  });

  it('skips counts that are not non-negative integers', () => {
    expect(usageOfRunFinished({ type: 'RUN_FINISHED', usage: [{ inputTokens: -1, outputTokens: 1.5 }, 'x'] })).toEqual({ inputTokens: 0, outputTokens: 0 });
  });
});

describe('parseRunUsage', () => {
  it('checks the record field by field', () => {
    expect(parseRunUsage({ inputTokens: 1, outputTokens: 2, cachedInputTokens: 0 })).toEqual({ inputTokens: 1, outputTokens: 2, cachedInputTokens: 0 });
    expect(() => parseRunUsage({ inputTokens: 1 })).toThrow('usage.outputTokens');
    const view = { runId: 'r', threadId: 't', status: 'completed', lastSeq: 0, startedAt: 1, updatedAt: 2 };
    expect(() => parseRunView({ ...view, usage: { inputTokens: 'many', outputTokens: 1 } })).toThrow('record.usage.inputTokens');
  });
});
