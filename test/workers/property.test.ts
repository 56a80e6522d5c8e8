import type { StreamChunk } from '@tanstack/ai';
import { evictDurableObject } from 'cloudflare:test';
import { expect, it } from 'vitest';
import { isStatusFrame } from '../../src/protocol/index.ts';
import { api, createRun, feed, finished, openTail, runStub, type Tail } from './helpers.ts';
import { prng } from '../support/prng.ts';


const QUIET = 'http://quiet-runner.test/control';

/** A client as the property sees it: every connection it made, and where it resumes. */
interface Client {
  start: number;
  tails: Tail[];
  live: Tail | undefined;
}

const lastSeqOf = (client: Client) => client.tails.flatMap((t) => t.seqs()).at(-1) ?? client.start;

async function evict(runId: string): Promise<void> {
  // A runner restart leaves the pump idle (waiting on the alarm), which is
  // when the runtime may evict the object with its sockets hibernated.
  await fetch(`${QUIET}/restart/${runId}`, { method: 'POST' });
  const before = ((await (await fetch(`${QUIET}/refused/${runId}`)).json()) as { refused: number }).refused;
  await api(`/runs/${runId}`); // wakes the object so it notices the hang-up and tries to reattach
  while (((await (await fetch(`${QUIET}/refused/${runId}`)).json()) as { refused: number }).refused <= before) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await evictDurableObject(runStub(runId), { webSockets: 'hibernate' });
  await fetch(`${QUIET}/recover/${runId}`, { method: 'POST' });
}

const CASES = 200;
const SEED = 20261129;

it(`keeps every client gap-free and duplicate-free over ${CASES} random interleavings (seed ${SEED})`, { timeout: 240_000 }, async () => {
  const random = prng(SEED);
  const pick = (n: number) => Math.floor(random() * n);
  for (let c = 0; c < CASES; c++) {
    const { json } = await createRun({ prompt: `case ${c}` });
    const runId = json.runId;
    const produced: StreamChunk[] = [];
    const clients: Client[] = [];
    const steps: string[] = [];
    for (let step = 0, n = 3 + pick(10); step < n; step++) {
      const op = pick(5);
      if (op === 0 || clients.length === 0) {
        const count = 1 + pick(20);
        const chunks = Array.from({ length: count }, (_, i) => ({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `${c}:${produced.length + i}` }) as StreamChunk);
        produced.push(...chunks);
        await feed(runId, chunks);
        steps.push(`append ${count}`);
      } else if (op === 1) {
        // A new client, from the start or from a point a previous session remembered.
        const start = pick(produced.length + 1) - 1;
        const tail = await openTail(runId, `?fromSeq=${start}`);
        clients.push({ start, tails: [tail], live: tail });
        steps.push(`attach ${start}`);
      } else if (op === 2) {
        const client = clients[pick(clients.length)]!;
        if (client.live) {
          client.live.ws.close(1000, 'drop');
          await client.live.closed;
          client.live = undefined;
          steps.push('drop');
        } else {
          const tail = await openTail(runId, `?fromSeq=${lastSeqOf(client)}`);
          client.tails.push(tail);
          client.live = tail;
          steps.push(`reattach ${lastSeqOf(client)}`);
        }
      } else {
        await evict(runId);
        steps.push('evict');
      }
    }
    await feed(runId, [finished(runId)]);
    const lastSeq = produced.length;
    for (const client of clients) {
      if (!client.live) {
        const tail = await openTail(runId, `?fromSeq=${lastSeqOf(client)}`);
        client.tails.push(tail);
        client.live = tail;
      }
      await client.live.closed;
      const seqs = client.tails.flatMap((t) => t.seqs());
      const context = `case ${c}: ${steps.join(', ')}`;
      expect(seqs, context).toEqual(Array.from({ length: lastSeq - client.start }, (_, i) => client.start + 1 + i));
      const frames = client.live.frames;
      expect(isStatusFrame(frames.at(-1)!) && frames.at(-1), context).toMatchObject({ record: { status: 'completed', lastSeq } });
    }
    // The stored log is exactly what the producer wrote.
    const reader = await openTail(runId);
    await reader.closed;
    expect(reader.frames.flatMap((f) => ('chunk' in f ? [f.chunk] : []))).toEqual([...produced, finished(runId)]);
  }
});
