import type { StreamChunk } from '@tanstack/ai';
import { describe, expect, it } from 'vitest';
import { parseTailFrame, type RunView, type TailFrame } from '../../src/protocol/index.ts';
import { api, createRun, feed, finished, range, text, texts } from './helpers.ts';

interface SseEvent {
  id?: string;
  event?: string;
  data: string;
}

async function bodyText(res: Response): Promise<string> {
  return new TextDecoder().decode(await res.arrayBuffer());
}

/** Parses an SSE body strictly: blocks separated by a blank line, `field: value` lines, nothing else. */
function parseSse(body: string): SseEvent[] {
  expect(body.endsWith('\n\n')).toBe(true);
  return body
    .slice(0, -2)
    .split('\n\n')
    .map((block) => {
      const event: Partial<SseEvent> = {};
      for (const line of block.split('\n')) {
        const match = /^(id|event|data): (.*)$/s.exec(line); // SSE lines end at CR or LF only, not U+2028
        expect(match, `unexpected SSE line ${JSON.stringify(line)}`).not.toBeNull();
        const [, field, value] = match!;
        expect(event[field as keyof SseEvent], `${field} twice in one event`).toBeUndefined();
        event[field as keyof SseEvent] = value;
      }
      expect(event.data).toBeDefined();
      return event as SseEvent;
    });
}

function parseNdjson(body: string): TailFrame[] {
  expect(body.endsWith('\n')).toBe(true);
  return body
    .slice(0, -1)
    .split('\n')
    .map((line) => parseTailFrame(JSON.parse(line)));
}

async function recordOf(runId: string): Promise<RunView> {
  const { links: _links, ...record } = (await (await api(`/runs/${runId}`)).json()) as RunView & { links: unknown };
  return record;
}

/** A completed run with `count` text chunks (seqs 0..count-1) and RUN_FINISHED at seq `count`. */
async function completedRun(count: number): Promise<{ runId: string; chunks: StreamChunk[] }> {
  const { json } = await createRun();
  const chunks = [...texts(0, count), finished(json.runId)];
  await feed(json.runId, chunks);
  return { runId: json.runId, chunks };
}

const SSE = { accept: 'text/event-stream' };

describe('GET /runs/:runId/events as SSE', () => {
  it('sends id: <seq> and data: <chunk> per event, then event: status, then ends', async () => {
    const { runId, chunks } = await completedRun(5);
    const res = await api(`/runs/${runId}/events`, { headers: SSE });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const events = parseSse(await bodyText(res));
    const record = await recordOf(runId);
    expect(record).toMatchObject({ status: 'completed', lastSeq: 5 });
    expect(events).toEqual([
      ...chunks.map((chunk, seq) => ({ id: String(seq), data: JSON.stringify(chunk) })),
      { event: 'status', data: JSON.stringify({ type: 'status', record }) },
    ]);
  });

  it('resumes after Last-Event-ID, which wins over ?fromSeq', async () => {
    const { runId } = await completedRun(7);
    const res = await api(`/runs/${runId}/events?fromSeq=0`, { headers: { ...SSE, 'last-event-id': '3' } });
    const events = parseSse(await bodyText(res));
    expect(events.filter((e) => e.id !== undefined).map((e) => Number(e.id))).toEqual(range(4, 7));
    expect(events.at(-1)?.event).toBe('status');
  });

  it('starts after ?fromSeq, or after ?offset as @tanstack/ai-client sends it', async () => {
    const { runId } = await completedRun(7);
    for (const [query, first] of [
      ['fromSeq=-1', 0],
      ['fromSeq=5', 6],
      ['offset=2', 3],
      ['fromSeq=7', 8],
      ['fromSeq=50', 8],
    ] as const) {
      const events = parseSse(await bodyText(await api(`/runs/${runId}/events?${query}`, { headers: SSE })));
      expect(events.filter((e) => e.id !== undefined).map((e) => Number(e.id)), query).toEqual(range(first, 7));
      expect(events.filter((e) => e.event === 'status'), query).toHaveLength(1);
    }
  });

  it('keeps a chunk with newlines inside strings on one data line', async () => {
    const { json } = await createRun();
    const chunk = { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'two\nlines\r\n and "quotes" \u2028' } as StreamChunk;
    await feed(json.runId, [chunk, finished(json.runId)]);
    const events = parseSse(await bodyText(await api(`/runs/${json.runId}/events`, { headers: SSE })));
    expect(JSON.parse(events[0]!.data)).toEqual(chunk);
  });
});

describe('GET /runs/:runId/events as NDJSON', () => {
  it('sends one {seq, id, chunk} frame per line, then the status frame, then ends', async () => {
    const { runId, chunks } = await completedRun(4);
    const res = await api(`/runs/${runId}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await bodyText(res);
    const lines = body.slice(0, -1).split('\n');
    expect(lines.slice(0, -1).map((line) => JSON.parse(line))).toEqual(chunks.map((chunk, seq) => ({ seq, id: String(seq), chunk })));
    expect(JSON.parse(lines.at(-1)!)).toEqual({ type: 'status', record: await recordOf(runId) });
  });

  it('is the format for any Accept but text/event-stream, and honours fromSeq', async () => {
    const { runId } = await completedRun(4);
    const res = await api(`/runs/${runId}/events?fromSeq=1`, { headers: { accept: 'application/json' } });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const frames = parseNdjson(await bodyText(res));
    expect(frames.flatMap((f) => ('seq' in f ? [f.seq] : []))).toEqual(range(2, 4));
    expect(frames.at(-1)).toMatchObject({ type: 'status', record: { status: 'completed' } });
  });

  it('ends a failed run with its error in the status frame', async () => {
    const { json } = await createRun();
    const runError = { type: 'RUN_ERROR', runId: json.runId, message: 'It broke.', code: 'broken' } as unknown as StreamChunk;
    await feed(json.runId, [text(0), runError]);
    const frames = parseNdjson(await bodyText(await api(`/runs/${json.runId}/events`)));
    expect(frames).toHaveLength(3);
    expect(frames.at(-1)).toMatchObject({ type: 'status', record: { status: 'failed', lastSeq: 1, error: { message: 'It broke.', code: 'broken' } } });
  });
});

/** Reads a streaming body line by line as it arrives. */
function lineReader(body: ReadableStream<Uint8Array>) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  return {
    reader,
    /** The next complete line, or null at the end of the stream. */
    async next(): Promise<string | null> {
      for (;;) {
        const nl = buffer.indexOf('\n');
        if (nl !== -1) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          return line;
        }
        const { done, value } = await reader.read();
        if (done) {
          expect(buffer).toBe('');
          return null;
        }
        buffer += value;
      }
    },
  };
}

describe('GET /runs/:runId/events live', () => {
  it('streams the backlog, then live appends, with every seq exactly once, then the status', async () => {
    const { json } = await createRun();
    const runId = json.runId;
    await feed(runId, texts(0, 3));
    const res = await api(`/runs/${runId}/events`);
    const lines = lineReader(res.body!);
    const frames: TailFrame[] = [];
    for (let i = 0; i < 3; i++) frames.push(parseTailFrame(JSON.parse((await lines.next())!)));

    // Caught up: everything from here is live.
    const rest = (async () => {
      for (let line = await lines.next(); line !== null; line = await lines.next()) frames.push(parseTailFrame(JSON.parse(line)));
    })();
    for (let batch = 0; batch < 10; batch++) expect(await feed(runId, texts(3 + batch * 4, 4))).toBe('open');
    expect(await feed(runId, [finished(runId)])).toBe('terminal');
    await rest;

    const seqs = frames.flatMap((f) => ('seq' in f ? [f.seq] : []));
    expect(seqs).toEqual(range(0, 43));
    expect(frames).toHaveLength(45);
    expect(frames.at(-1)).toEqual({ type: 'status', record: await recordOf(runId) });
  });

  it('streams live as SSE too', async () => {
    const { json } = await createRun();
    const runId = json.runId;
    const res = await api(`/runs/${runId}/events`, { headers: SSE });
    const body = bodyText(res);
    await feed(runId, texts(0, 2));
    await feed(runId, [...texts(2, 2), finished(runId)]);
    const events = parseSse(await body);
    expect(events.filter((e) => e.id !== undefined).map((e) => Number(e.id))).toEqual(range(0, 4));
    expect(events.at(-1)?.event).toBe('status');
  });

  it('lets a reader hang up mid-stream without disturbing the run', async () => {
    const { json } = await createRun();
    const runId = json.runId;
    await feed(runId, texts(0, 2));
    const lines = lineReader((await api(`/runs/${runId}/events`)).body!);
    expect(await lines.next()).not.toBeNull();
    await lines.reader.cancel();
    expect(await feed(runId, texts(2, 3))).toBe('open');
    expect(await feed(runId, [finished(runId)])).toBe('terminal');
    expect(await recordOf(runId)).toMatchObject({ status: 'completed', lastSeq: 5 });
    const frames = parseNdjson(await bodyText(await api(`/runs/${runId}/events`)));
    expect(frames.flatMap((f) => ('seq' in f ? [f.seq] : []))).toEqual(range(0, 5));
  });
});
