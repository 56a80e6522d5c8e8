import { PassThrough } from 'node:stream';
import { expect } from 'vitest';
import { HOST_TOOL_CALL_EVENT, type HarnessName, type HostToolCall, type RunnerRunRequest, type ToolDescriptor, type ToolOutcome } from '../../../src/protocol/index.ts';
import { ChunkWriter } from '../../src/chunk-writer.ts';
import type { Harness } from '../../src/harnesses/types.ts';
import { HostTools } from '../../src/host-tools.ts';
import { createRedactor } from '../../src/redact.ts';
import { runBody, runId, stream, type Chunk, type TestRunner } from '../helpers.ts';

/** One run of `harness` on `runner` with `prompt`, read to its end. */
export async function runHarness(runner: TestRunner, harness: HarnessName, prompt: string, fields: Record<string, unknown> = {}): Promise<{ id: string; chunks: Chunk[] }> {
  const id = runId(`${harness}_double`);
  const body = runBody(id, { harness, messages: [{ role: 'user', content: prompt }], ...fields });
  const { chunks, end } = await (await stream(`${runner.url}/run`, 'POST', body)).rest();
  expect(end).toBe('end');
  return { id, chunks };
}

/**
 * One run of `harness` in this process, with the harness process's
 * `HostTools` (as harness-process.ts builds them) writing to an in-memory
 * stdout: every chunk written, in order. `answer` plays the run object for
 * each host tool request chunk, on a later turn of the event loop, as the
 * runner delivers an outcome.
 */
export async function runWithHostTools(
  harness: Harness,
  request: RunnerRunRequest,
  workspace: string,
  answer: (request: HostToolCall) => ToolOutcome | Promise<ToolOutcome>,
  unadvertised: readonly ToolDescriptor[] = [],
): Promise<Chunk[]> {
  const out = new PassThrough();
  const redact = createRedactor({});
  const writer = new ChunkWriter(out, redact);
  const tools = new HostTools(request.tools ?? [], writer, { unadvertised });
  const chunks: Chunk[] = [];
  const answered: Promise<void>[] = [];
  let buffered = '';
  out.setEncoding('utf8');
  out.on('data', (data: string) => {
    buffered += data;
    let newline: number;
    while ((newline = buffered.indexOf('\n')) !== -1) {
      const chunk = JSON.parse(buffered.slice(0, newline)) as Chunk;
      buffered = buffered.slice(newline + 1);
      chunks.push(chunk);
      if (chunk.type === 'CUSTOM' && chunk.name === HOST_TOOL_CALL_EVENT) {
        const value = chunk.value as HostToolCall;
        const later = new Promise<void>((resolve) => setImmediate(resolve));
        answered.push(later.then(() => answer(value)).then((outcome) => tools.resolve({ toolCallId: value.toolCallId, outcome })));
      }
    }
  });
  await harness({ request, workspace, writer, env: process.env, redact, tools });
  await writer.close();
  await Promise.all(answered);
  return chunks;
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
