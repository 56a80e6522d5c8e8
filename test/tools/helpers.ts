import { parseTailFrame, isEventFrame, type RunView } from '../../src/protocol/index.ts';
import { api } from '../workers/helpers.ts';

/** A chunk as a test reads it back: its JSON, field by field. */
export type Chunk = Record<string, unknown> & { type: string };

/** Polls `read` until `done` holds, for at most `ms`; returns the last value either way. */
export async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export async function record(runId: string, init?: RequestInit): Promise<RunView> {
  return (await (await api(`/runs/${runId}`, init)).json()) as RunView;
}

export const settled = (runId: string) => until(() => record(runId), (r) => r.status !== 'running');

/** Every chunk of the run as a client replays it (the run has ended, so the NDJSON tail ends too). */
export async function chunksOf(runId: string): Promise<Chunk[]> {
  const text = await (await api(`/runs/${runId}/events?fromSeq=-1`)).text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => parseTailFrame(JSON.parse(line)))
    .flatMap((frame) => (isEventFrame(frame) ? [frame.chunk as unknown as Chunk] : []));
}

/** The parsed `content` of each `TOOL_CALL_RESULT` of one call: exactly one when the harness got its answer once. */
export function resultsOf(chunks: Chunk[], toolCallId: string): unknown[] {
  return chunks.filter((chunk) => chunk.type === 'TOOL_CALL_RESULT' && chunk.toolCallId === toolCallId).map((chunk) => JSON.parse(String(chunk.content)));
}
