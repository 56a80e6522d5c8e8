import type { StreamChunk } from '@tanstack/ai';
import { describe, expect, it } from 'vitest';
import { api, createRun, feed, settled, texts } from './helpers.ts';

/** SPEC: the record keeps what RUN_FINISHED reported it used, in AG-UI's token names. */
describe('usage on the record', () => {
  it('keeps the RUN_FINISHED usage entries, summed, on the completed record', async () => {
    const { json } = await createRun();
    const usage = [
      { model: 'claude-sonnet-4-6', inputTokens: 12, outputTokens: 34, totalTokens: 46, cachedInputTokens: 8 },
      { model: 'claude-haiku-4-5', inputTokens: 3, outputTokens: 4, totalTokens: 7 },
    ];
    await feed(json.runId, [...texts(0, 2), { type: 'RUN_FINISHED', runId: json.runId, threadId: json.runId, usage } as unknown as StreamChunk]);
    const record = await settled(json.runId);
    expect(record).toMatchObject({ status: 'completed', usage: { inputTokens: 15, outputTokens: 38, cachedInputTokens: 8 } });
    expect(await (await api(`/runs/${json.runId}`)).json()).toMatchObject({ usage: { inputTokens: 15, outputTokens: 38, cachedInputTokens: 8 } });
  });

  it('has no usage when RUN_FINISHED reported none', async () => {
    const { json } = await createRun();
    await feed(json.runId, [{ type: 'RUN_FINISHED', runId: json.runId, threadId: json.runId } as unknown as StreamChunk]);
    expect((await settled(json.runId)).usage).toBeUndefined();
  });
});
