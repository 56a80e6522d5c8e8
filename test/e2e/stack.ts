import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { isStatusFrame, parseTailFrame, type RunView, type TailFrame } from '../../src/protocol/index.ts';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../scripts/local-stack.ts';
import { prng } from '../support/prng.ts';

export { prng };

/** The real local stack (what `npm start` runs) on free ports, with its own state directory. */
export async function startStack(options: Partial<LocalStackOptions> = {}): Promise<LocalStack> {
  const dir = mkdtempSync(join(tmpdir(), 'harness-relay-e2e-'));
  const stack = await startLocalStack({ port: 0, runnerPort: 0, persistTo: dir, ...options });
  return {
    ...stack,
    async close() {
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function postRun(base: string, body: unknown): Promise<RunView> {
  const res = await fetch(`${base}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 202) throw new Error(`POST /runs answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as RunView;
}

export async function getRun(base: string, runId: string): Promise<RunView> {
  return (await (await fetch(`${base}/runs/${runId}`)).json()) as RunView;
}

export async function waitSettled(base: string, runId: string): Promise<RunView> {
  for (let i = 0; i < 3_000; i++) {
    const record = await getRun(base, runId);
    if (record.status !== 'running') return record;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`run ${runId} never settled`);
}


/** A chunk as a test reads it back: its JSON, field by field. */
export type StoredChunk = Record<string, unknown> & { type: string };

/** Every chunk of a run that has ended, as a client replays it over the NDJSON tail. */
export async function storedChunks(base: string, runId: string): Promise<StoredChunk[]> {
  const text = await (await fetch(`${base}/runs/${runId}/events?fromSeq=-1`)).text();
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => parseTailFrame(JSON.parse(line)))
    .flatMap((frame) => (isStatusFrame(frame) ? [] : [frame.chunk as unknown as StoredChunk]));
}

export interface FollowResult {
  frames: TailFrame[];
  seqs: number[];
  record: RunView | undefined;
  connections: number;
}

/**
 * Follows a run over WebSocket like a client on a flaky network: after a
 * random number of frames it drops the connection (no close handshake) and
 * reconnects from the last seq it has, until the status frame and close 1000.
 */
export async function follow(base: string, runId: string, random: () => number, maxDrops = 3): Promise<FollowResult> {
  const result: FollowResult = { frames: [], seqs: [], record: undefined, connections: 0 };
  let drops = 0;
  for (;;) {
    const fromSeq = result.seqs.at(-1) ?? -1;
    const dropAfter = drops < maxDrops ? 1 + Math.floor(random() * 40) : Infinity;
    result.connections++;
    const code = await new Promise<number>((resolve, reject) => {
      const ws = new WebSocket(`${base.replace('http', 'ws')}/runs/${runId}/ws?fromSeq=${fromSeq}`);
      let received = 0;
      let dropped = false;
      ws.on('message', (data) => {
        // Frames already buffered when the client dropped are lost, as on a real network.
        if (dropped) return;
        const frame = parseTailFrame(JSON.parse(String(data)));
        result.frames.push(frame);
        if ('seq' in frame) result.seqs.push(frame.seq);
        else {
          // The status frame is the last; the server closes with 1000 after it
          // (asserted in the workerd tests). wrangler dev's proxy holds the TCP
          // connection open for seconds after the close handshake, so stop here.
          result.record = frame.record;
          ws.terminate();
          resolve(1000);
          return;
        }
        if (++received >= dropAfter && !('type' in frame)) {
          drops++;
          dropped = true;
          ws.terminate();
        }
      });
      ws.on('close', (closeCode) => resolve(closeCode));
      ws.on('error', reject);
    });
    // A drop can race the server's own close: only the status frame ends the run for the client.
    if (code === 1000 && result.record) return result;
  }
}
