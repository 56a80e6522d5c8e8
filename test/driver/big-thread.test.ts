import { describe, expect, it } from 'vitest';
import { api, createRun, settled } from '../workers/helpers.ts';

/**
 * A long conversation against the real runner: a transcript past the
 * 1,000 messages one request may carry is still read, extended and sent to
 * the runner whole (the bound of a request is not the bound of a thread).
 */
describe('a thread of 5,000 messages', () => {
  it('takes turn after turn, stays readable, and the runner gets the whole transcript', async () => {
    const threadId = 'five-thousand';
    for (let turn = 0; turn < 5; turn++) {
      const messages = Array.from({ length: 1_000 }, (_, i) => ({ role: 'user', content: `turn ${turn} note ${i}` }));
      const { res, json } = await createRun({ messages, threadId, harnessOptions: { chunks: 1, delayMs: 0 } });
      expect(res.status).toBe(202);
      expect((await settled(json.runId)).status).toBe('completed');
    }
    const transcript = await api(`/threads/${threadId}/messages`);
    expect(transcript.status).toBe(200);
    const { messages } = (await transcript.json()) as { messages: unknown[] };
    expect(messages.length).toBeGreaterThan(5_000);

    const { res, json } = await createRun({ prompt: 'and one more', threadId, harnessOptions: { chunks: 1, delayMs: 0 } });
    expect(res.status).toBe(202);
    expect((await settled(json.runId)).status).toBe('completed');
    const sent = (await (await fetch(`http://runner.test/control/requests/${json.runId}`)).json()) as { messages: unknown[] };
    expect(sent.messages.length).toBeGreaterThan(5_000);
    expect((await api(`/threads/${threadId}`)).status).toBe(200);
  }, 120_000);
});
