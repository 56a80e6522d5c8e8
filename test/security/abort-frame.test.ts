import { runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { attachSubprotocols, isStatusFrame } from '../../src/protocol/index.ts';
import { parseAttachment } from '../../src/run/tails.ts';
import type { Tail } from '../workers/helpers.ts';
import { bearer, createRun, feed, finished, openTail, status, stubOf, texts } from './helpers.ts';

/** `canCancel` of every socket the run object holds, as the object itself reads it. */
function cancelRights(runId: string): Promise<boolean[]> {
  return runInDurableObject(stubOf(null, runId), (_object, state) => state.getWebSockets().map((ws) => parseAttachment(ws.deserializeAttachment())?.canCancel ?? false));
}

/** Sends `abort`, then a ping: the pong proves the socket delivered what came before it. */
async function sendAbort(tail: Tail, runId?: string): Promise<void> {
  const pong = new Promise<void>((resolve) => tail.ws.addEventListener('message', (event) => {
      if (event.data === 'pong') resolve();
    }));
  tail.ws.send(JSON.stringify({ type: 'abort', runId }));
  tail.ws.send('ping');
  await pong;
}

describe('an abort frame on a tail', () => {
  it('cancels the run on a socket opened with the API token', async () => {
    const { runId } = await createRun();
    const tail = await openTail(`/runs/${runId}/ws`, bearer());
    expect(await cancelRights(runId)).toEqual([true]);
    await feed(null, runId, texts(0, 2));
    tail.ws.send(JSON.stringify({ type: 'abort', runId }));
    expect((await tail.closed).code).toBe(1000);
    const last = tail.frames.at(-1)!;
    expect(isStatusFrame(last) && last.record.status).toBe('aborted');
    expect(await status(null, runId)).toBe('aborted');
  });

  it.each([
    ['?token=', (token: string) => ({ query: `?token=${token}`, headers: {} })],
    ['the subprotocol', (token: string) => ({ query: '', headers: { 'sec-websocket-protocol': attachSubprotocols(token).join(', ') } })],
  ])('is ignored on a socket opened with an attach token (%s): the run goes on', async (_how, via) => {
    const { runId, attachToken } = await createRun();
    const { query, headers } = via(attachToken);
    const tail = await openTail(`/runs/${runId}/ws${query}`, headers);
    expect(await cancelRights(runId)).toEqual([false]);
    await sendAbort(tail, runId);
    await sendAbort(tail);
    expect(await status(null, runId)).toBe('running');
    await feed(null, runId, [...texts(0, 3), finished(runId)]);
    expect((await tail.closed).code).toBe(1000);
    expect(tail.seqs()).toEqual([0, 1, 2, 3]);
    const last = tail.frames.at(-1)!;
    expect(isStatusFrame(last) && last.record.status).toBe('completed');
  });

  it('is ignored on an attach-token socket even while an API-token socket of the same run could cancel', async () => {
    const { runId, attachToken } = await createRun();
    const reader = await openTail(`/runs/${runId}/ws?token=${attachToken}`);
    const owner = await openTail(`/runs/${runId}/ws`, bearer());
    expect((await cancelRights(runId)).sort()).toEqual([false, true]);
    await sendAbort(reader, runId);
    expect(await status(null, runId)).toBe('running');
    owner.ws.send(JSON.stringify({ type: 'abort', runId }));
    expect((await reader.closed).code).toBe(1000);
    expect(await status(null, runId)).toBe('aborted');
  });
});
