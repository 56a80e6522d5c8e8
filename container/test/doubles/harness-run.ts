import { expect } from 'vitest';
import type { HarnessName } from '../../../src/protocol/index.ts';
import { runBody, runId, stream, type Chunk, type TestRunner } from '../helpers.ts';

/** One run of `harness` on `runner` with `prompt`, read to its end. */
export async function runHarness(runner: TestRunner, harness: HarnessName, prompt: string, fields: Record<string, unknown> = {}): Promise<{ id: string; chunks: Chunk[] }> {
  const id = runId(`${harness}_double`);
  const body = runBody(id, { harness, messages: [{ role: 'user', content: prompt }], ...fields });
  const { chunks, end } = await (await stream(`${runner.url}/run`, 'POST', body)).rest();
  expect(end).toBe('end');
  return { id, chunks };
}

export function textOf(chunks: readonly Chunk[]): string {
  return chunks
    .filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT')
    .map((chunk) => chunk.delta)
    .join('');
}

/**
 * The run's stored bytes (one JSON line per chunk, as the relay stores them)
 * and the same text deltas as delta-only chunk JSON: what a linear-size run
 * must stay within 1.2x of.
 */
export function storedBytes(chunks: readonly Chunk[]): { stored: number; deltaOnly: number } {
  const line = (value: unknown) => JSON.stringify(value).length + 1;
  const deltas = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT');
  return {
    stored: chunks.reduce((sum, chunk) => sum + line(chunk), 0),
    deltaOnly: deltas.reduce((sum, chunk) => sum + line({ type: chunk.type, messageId: chunk.messageId, delta: chunk.delta, timestamp: chunk.timestamp }), 0),
  };
}

/** Deltas only: no accumulated `content`/`args` rides along on a content chunk. */
export function expectDeltaOnly(chunks: readonly Chunk[]): void {
  for (const chunk of chunks) {
    if (chunk.type === 'TEXT_MESSAGE_CONTENT') expect(Object.keys(chunk).sort()).toEqual(['delta', 'messageId', 'timestamp', 'type']);
    if (chunk.type === 'TOOL_CALL_ARGS') expect(Object.keys(chunk).sort()).toEqual(['delta', 'timestamp', 'toolCallId', 'type']);
  }
}
