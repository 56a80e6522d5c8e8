import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChunkWriter } from '../src/chunk-writer.ts';
import { REDACTED, createRedactor, secretValues } from '../src/redact.ts';
import { StreamRedactor, type StreamChunk } from '../src/stream-redact.ts';
import { cleanEnv, runBody, runId, startTestRunner, stream, type TestRunner } from './helpers.ts';

const SECRET = 'sk-ant-api03-split-me-9f8e7d';
const ENV = { ANTHROPIC_API_KEY: SECRET, OTHER_TOKEN: 'tok-ABCDEFGHIJ' };
const SECRETS = secretValues(ENV);
const LONGEST = Math.max(...SECRETS.map((secret) => secret.length));

/** Writes chunks through a real ChunkWriter (line and stream redaction) and answers the chunks it wrote. */
async function written(chunks: readonly StreamChunk[]): Promise<{ text: string; chunks: StreamChunk[] }> {
  const out = new PassThrough();
  let text = '';
  out.setEncoding('utf8').on('data', (data: string) => (text += data));
  const writer = new ChunkWriter(out, createRedactor(ENV), SECRETS);
  for (const chunk of chunks) await writer.write(chunk);
  await writer.close();
  return { text, chunks: text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as StreamChunk) };
}

/** `text` cut at `cuts` (ascending offsets) into TEXT_MESSAGE_CONTENT deltas, with an accumulated `content` as some adapters send. */
function textMessage(text: string, cuts: readonly number[]): StreamChunk[] {
  const bounds = [0, ...cuts, text.length];
  const chunks: StreamChunk[] = [{ type: 'TEXT_MESSAGE_START', messageId: 'm1', role: 'assistant' }];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const delta = text.slice(bounds[i], bounds[i + 1]);
    if (delta !== '') chunks.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta, content: text.slice(0, bounds[i + 1]) });
  }
  chunks.push({ type: 'TEXT_MESSAGE_END', messageId: 'm1' });
  return chunks;
}

const deltasOf = (chunks: readonly StreamChunk[], type = 'TEXT_MESSAGE_CONTENT') =>
  chunks.filter((chunk) => chunk.type === type).map((chunk) => chunk.delta as string).join('');

const every = (length: number) => Array.from({ length: length - 1 }, (_, i) => i + 1);

describe('streaming redaction', () => {
  const TEXT = `The key is ${SECRET}, keep it.`;
  const EXPECTED = `The key is ${REDACTED}, keep it.`;

  it('redacts a secret split in two at every split point', async () => {
    for (const cut of every(TEXT.length)) {
      const { text, chunks } = await written([...textMessage(TEXT, [cut]), { type: 'RUN_FINISHED', runId: 'r', threadId: 't' }]);
      expect(text, `cut at ${cut}`).not.toContain(SECRET);
      expect(deltasOf(chunks), `cut at ${cut}`).toBe(EXPECTED);
    }
  });

  it('redacts a secret streamed one character per delta, and never shows a prefix of it in an accumulated field', async () => {
    const { text, chunks } = await written(textMessage(TEXT, every(TEXT.length)));
    expect(text).not.toContain(SECRET);
    expect(deltasOf(chunks)).toBe(EXPECTED);
    for (const chunk of chunks.filter((c) => c.type === 'TEXT_MESSAGE_CONTENT')) {
      expect(EXPECTED.startsWith(chunk.content as string)).toBe(true);
      expect(chunk.delta).not.toBe('');
    }
    // The held text goes out before the message's end, which stays last.
    expect(chunks.at(-1)).toEqual({ type: 'TEXT_MESSAGE_END', messageId: 'm1' });
  });

  it('redacts two secrets back to back, each split, at every pair of split points', async () => {
    const both = `${SECRET}tok-ABCDEFGHIJ!`;
    for (const first of every(both.length)) {
      for (const second of every(both.length).filter((cut) => cut > first)) {
        const { chunks } = await written(textMessage(both, [first, second]));
        expect(deltasOf(chunks)).toBe(`${REDACTED}${REDACTED}!`);
      }
    }
  });

  it('redacts across reasoning deltas and tool-call argument deltas, and across the older STEP_FINISHED thinking', async () => {
    const args = JSON.stringify({ command: `curl -H "x-api-key: ${SECRET}"` });
    const chunks: StreamChunk[] = [
      ...[...TEXT].map((delta) => ({ type: 'REASONING_MESSAGE_CONTENT', messageId: 'r1', delta })),
      { type: 'REASONING_MESSAGE_END', messageId: 'r1' },
      ...[...args].map((delta, i) => ({ type: 'TOOL_CALL_ARGS', toolCallId: 'c1', delta, args: args.slice(0, i + 1) })),
      { type: 'TOOL_CALL_END', toolCallId: 'c1' },
      ...[...TEXT].map((delta, i) => ({ type: 'STEP_FINISHED', stepId: 's1', delta, content: TEXT.slice(0, i + 1) })),
      { type: 'STEP_FINISHED', stepId: 's1', delta: '', content: TEXT, signature: 'sig' },
    ];
    const { text, chunks: out } = await written(chunks);
    expect(text).not.toContain(SECRET);
    expect(deltasOf(out, 'REASONING_MESSAGE_CONTENT')).toBe(EXPECTED);
    expect(deltasOf(out, 'TOOL_CALL_ARGS')).toBe(args.replace(SECRET, REDACTED));
    expect(deltasOf(out, 'STEP_FINISHED')).toBe(EXPECTED);
    expect(out.at(-1)).toMatchObject({ type: 'STEP_FINISHED', signature: 'sig', content: EXPECTED });
    expect(out.findIndex((c) => c.type === 'TOOL_CALL_END')).toBeGreaterThan(out.findLastIndex((c) => c.type === 'TOOL_CALL_ARGS'));
  });

  it('flushes held text before a terminal chunk, which stays last', async () => {
    const cut = TEXT.indexOf(SECRET) + 5;
    const chunks = [{ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm1', delta: TEXT.slice(0, cut) }, { type: 'RUN_ERROR', message: 'boom' }];
    const { chunks: out } = await written(chunks);
    expect(out.map((c) => c.type)).toEqual(['TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_CONTENT', 'RUN_ERROR']);
    expect(deltasOf(out)).toBe(TEXT.slice(0, cut));
  });

  it('holds back at most (longest secret − 1) characters, and only a tail a secret starts with', () => {
    const redactor = new StreamRedactor(SECRETS);
    const prefix = SECRET.slice(0, -1);
    const [out] = redactor.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: `hello ${prefix}` });
    expect(out?.delta).toBe('hello ');
    expect(`hello ${prefix}`.length - (out?.delta as string).length).toBeLessThanOrEqual(LONGEST - 1);
    expect(redactor.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'zzz' })).toMatchObject([{ delta: `${prefix}zzz` }]);
    expect(redactor.push({ type: 'TEXT_MESSAGE_CONTENT', messageId: 'n', delta: 'no secret here.' })).toMatchObject([{ delta: 'no secret here.' }]);
  });

  it('keeps streams apart: a prefix in one message is not completed by another', async () => {
    const half = SECRET.length / 2;
    const { chunks } = await written([
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'a', delta: SECRET.slice(0, half) },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 'b', delta: SECRET.slice(half) },
      { type: 'TEXT_MESSAGE_END', messageId: 'a' },
      { type: 'TEXT_MESSAGE_END', messageId: 'b' },
    ]);
    expect(chunks.map((c) => `${c.type} ${c.messageId} ${c.delta ?? ''}`)).toEqual([
      `TEXT_MESSAGE_CONTENT b ${SECRET.slice(half)}`,
      `TEXT_MESSAGE_CONTENT a ${SECRET.slice(0, half)}`,
      'TEXT_MESSAGE_END a ',
      'TEXT_MESSAGE_END b ',
    ]);
  });

  it('changes nothing when there is no secret', async () => {
    const chunks = textMessage(TEXT, every(TEXT.length));
    expect(new StreamRedactor([]).push(chunks[1]!)).toEqual([chunks[1]]);
    const out = new PassThrough();
    let text = '';
    out.setEncoding('utf8').on('data', (data: string) => (text += data));
    const writer = new ChunkWriter(out, createRedactor({}));
    for (const chunk of chunks) writer.write(chunk);
    await writer.close();
    expect(text).toBe(chunks.map((chunk) => `${JSON.stringify(chunk)}\n`).join(''));
  });
});

describe('streaming redaction in a real harness process', () => {
  const FIXTURES = fileURLToPath(new URL('./fixtures', import.meta.url));
  let runner: TestRunner;
  let root: string;
  beforeAll(async () => {
    chmodSync(join(FIXTURES, 'claude'), 0o755);
    root = mkdtempSync(join(tmpdir(), 'relay-stream-redact-'));
    runner = await startTestRunner({ env: cleanEnv({ ANTHROPIC_API_KEY: SECRET, PATH: `${FIXTURES}${delimiter}${process.env.PATH ?? ''}`, RUNNER_WORKSPACE_ROOT: root }) });
  });
  afterAll(async () => {
    await runner.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('keeps a key the CLI streams one character per delta out of every stored line', async () => {
    const id = runId('spell');
    const answer = await stream(`${runner.url}/run`, 'POST', runBody(id, { harness: 'claude-code', messages: [{ role: 'user', content: 'MODE:spell' }] }));
    const { chunks, end } = await answer.rest();
    expect(end).toBe('end');
    // What the relay stores is exactly these lines; the runner's own replay of them is the same.
    const replay = await (await stream(`${runner.url}/runs/${id}/stream?fromSeq=-1`)).rest();
    for (const lines of [chunks, replay.chunks]) expect(JSON.stringify(lines)).not.toContain(SECRET);
    const text = (type: string) => chunks.filter((chunk) => chunk.type === type).map((chunk) => chunk.delta).join('');
    expect(text('REASONING_MESSAGE_CONTENT')).toBe(`thinking about ${REDACTED} now`);
    expect(text('TEXT_MESSAGE_CONTENT')).toBe(`the key is ${REDACTED}.`);
    expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
  });
});
