import { describe, expect, it } from 'vitest';
import { TOOL_CALL_ID_PATTERN } from '../../src/protocol/index.ts';
import { ToolCallCorrelator } from '../src/harnesses/tool-call-correlator.ts';

describe('ToolCallCorrelator', () => {
  it('gives a bridge call the id of the stream call it follows', async () => {
    const correlator = new ToolCallCorrelator();
    correlator.offer({ toolCallId: 'toolu_a', name: 'lookup', input: { word: 'relay', lang: 'en' } });
    // Same input, keys in another order: the CLI and the model need not agree on key order.
    expect(await correlator.claim('lookup', { lang: 'en', word: 'relay' })).toBe('toolu_a');
  });

  it('waits for the stream call when the MCP request comes first', async () => {
    const correlator = new ToolCallCorrelator();
    const claimed = correlator.claim('lookup', { word: 'relay' });
    correlator.offer({ toolCallId: 'toolu_b', name: 'lookup', input: { word: 'relay' } });
    expect(await claimed).toBe('toolu_b');
  });

  it('matches on name and input, and hands out each stream call once, oldest first', async () => {
    const correlator = new ToolCallCorrelator();
    correlator.offer({ toolCallId: 'toolu_1', name: 'lookup', input: { word: 'a' } });
    correlator.offer({ toolCallId: 'toolu_2', name: 'weather', input: { word: 'a' } });
    correlator.offer({ toolCallId: 'toolu_3', name: 'lookup', input: { word: 'b' } });
    correlator.offer({ toolCallId: 'toolu_4', name: 'lookup', input: { word: 'a' } });
    expect(await correlator.claim('lookup', { word: 'b' })).toBe('toolu_3');
    expect(await correlator.claim('lookup', { word: 'a' })).toBe('toolu_1');
    expect(await correlator.claim('lookup', { word: 'a' })).toBe('toolu_4');
    expect(await correlator.claim('weather', { word: 'a' })).toBe('toolu_2');
  });

  it('falls back to a fresh id of its own when the stream never shows the call', async () => {
    const correlator = new ToolCallCorrelator(0);
    const first = await correlator.claim('lookup', { word: 'a' });
    const second = await correlator.claim('lookup', { word: 'a' });
    expect(first).toMatch(TOOL_CALL_ID_PATTERN);
    expect(first).not.toBe(second);
    // A stream call that comes after the fallback is left for a later bridge call, not given twice.
    correlator.offer({ toolCallId: 'toolu_late', name: 'lookup', input: { word: 'a' } });
    expect(await correlator.claim('lookup', { word: 'a' })).toBe('toolu_late');
  });

  it('stops waiting when the run is aborted', async () => {
    const correlator = new ToolCallCorrelator();
    const abort = new AbortController();
    const claimed = correlator.claim('lookup', {}, abort.signal);
    abort.abort(new Error('run cancelled'));
    await expect(claimed).rejects.toThrow('run cancelled');
    // The aborted claim no longer waits: the next stream call goes to the next claim.
    correlator.offer({ toolCallId: 'toolu_next', name: 'lookup', input: {} });
    expect(await correlator.claim('lookup', {})).toBe('toolu_next');
  });
});
