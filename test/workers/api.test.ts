import { env, listDurableObjectIds } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { isStatusFrame } from '../../src/protocol/index.ts';
import { api, BASE, createRun, feed, finished, openTail, range, texts } from './helpers.ts';

const RUN_ID = /^run_[0-9a-f]{32}$/;
const UNKNOWN_RUN = `run_${'0'.repeat(32)}`;

interface ErrorBody {
  error: { code: string; message: string };
}

/** Every error: the status, a JSON body with exactly `{error: {code, message}}`, and a sentence in it. */
async function expectError(res: Response, status: number, code: string): Promise<ErrorBody> {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = (await res.json()) as ErrorBody;
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error.code).toBe(code);
  expect(typeof body.error.message).toBe('string');
  expect(body.error.message.trim().length).toBeGreaterThan(10);
  return body;
}

function postRuns(body: BodyInit | null, headers: Record<string, string> = {}, extra: RequestInit = {}) {
  return api('/runs', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body, ...extra });
}

/** The object id a run id lives in (the Worker names objects by run id). */
function objectIdOf(runId: string): string {
  return env.RUNS.idFromName(runId).toString();
}

async function objectIds(): Promise<Set<string>> {
  return new Set((await listDurableObjectIds(env.RUNS)).map((id) => id.toString()));
}

let keyCounter = 0;
const freshKey = (label: string) => `${label}-${++keyCounter}-${crypto.randomUUID()}`;

describe('POST /runs', () => {
  it('answers 202 with Location, the record and its links', async () => {
    const before = Date.now();
    const { res, json } = await createRun({ prompt: 'hello' });
    expect(res.status).toBe(202);
    expect(json.runId).toMatch(RUN_ID);
    expect(res.headers.get('location')).toBe(`/runs/${json.runId}`);
    expect(json).toMatchObject({ threadId: json.runId, status: 'running', lastSeq: -1 });
    expect(json.startedAt).toBeTypeOf('number');
    expect(json.updatedAt).toBeTypeOf('number');
    expect(json.startedAt as number).toBeGreaterThanOrEqual(before - 1000);
    expect(json.finishedAt).toBeUndefined();
    expect(json.error).toBeUndefined();
    expect(json.links).toEqual({ self: `/runs/${json.runId}`, ws: `/runs/${json.runId}/ws`, events: `/runs/${json.runId}/events` });
  });

  it('mints a distinct run id per request', async () => {
    const a = await createRun();
    const b = await createRun();
    expect(a.json.runId).not.toBe(b.json.runId);
  });

  it('accepts the messages form and keeps an explicit threadId', async () => {
    const { res, json } = await createRun({
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
        { role: 'user', content: [{ type: 'text', content: 'again' }] },
      ],
      threadId: 'thread_A-1',
      harness: 'demo',
      model: 'demo-model',
      harnessOptions: { chunks: 3, delayMs: 0 },
    });
    expect(res.status).toBe(202);
    expect(json.runId).toMatch(RUN_ID);
    expect(json.threadId).toBe('thread_A-1');
    expect(json.status).toBe('running');
  });

  it('accepts a body of exactly 1 MiB', async () => {
    const empty = JSON.stringify({ prompt: '' });
    const body = JSON.stringify({ prompt: 'x'.repeat(1_048_576 - empty.length) });
    expect(new TextEncoder().encode(body).byteLength).toBe(1_048_576);
    const res = await postRuns(body);
    expect(res.status).toBe(202);
  });
});

describe('Idempotency-Key', () => {
  it('returns the same run (200) for the same key and body, and creates no second run', async () => {
    const key = freshKey('same');
    const first = await createRun({ prompt: 'once' }, { 'idempotency-key': key });
    expect(first.res.status).toBe(202);
    const before = await objectIds();
    const second = await createRun({ prompt: 'once' }, { 'idempotency-key': key });
    expect(second.res.status).toBe(200);
    expect(second.json.runId).toBe(first.json.runId);
    expect(second.res.headers.get('location')).toBe(`/runs/${first.json.runId}`);
    expect(second.json).toMatchObject({ threadId: first.json.threadId, startedAt: first.json.startedAt, status: 'running' });
    expect(await objectIds()).toEqual(before);
  });

  it('answers the run as it is now, not as it was created', async () => {
    const key = freshKey('later');
    const { json } = await createRun({ prompt: 'twice' }, { 'idempotency-key': key });
    await feed(json.runId, [...texts(0, 2), finished(json.runId)]);
    const again = await createRun({ prompt: 'twice' }, { 'idempotency-key': key });
    expect(again.res.status).toBe(200);
    expect(again.json).toMatchObject({ runId: json.runId, status: 'completed', lastSeq: 2 });
  });

  it('answers 409 idempotency_conflict for the same key with another body, and leaves the run alone', async () => {
    const key = freshKey('conflict');
    const { json } = await createRun({ prompt: 'one' }, { 'idempotency-key': key });
    const res = await postRuns(JSON.stringify({ prompt: 'two' }), { 'idempotency-key': key });
    await expectError(res, 409, 'idempotency_conflict');
    const other = await postRuns(JSON.stringify({ prompt: 'one', threadId: 'elsewhere' }), { 'idempotency-key': key });
    await expectError(other, 409, 'idempotency_conflict');
    const record = (await (await api(`/runs/${json.runId}`)).json()) as Record<string, unknown>;
    expect(record.threadId).toBe(json.runId);
  });

  it('gives concurrent retries exactly one 202 and one run id', async () => {
    const key = freshKey('race');
    const before = await objectIds();
    const results = await Promise.all(Array.from({ length: 5 }, () => createRun({ prompt: 'race' }, { 'idempotency-key': key })));
    const statuses = results.map((r) => r.res.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 202]);
    const ids = new Set(results.map((r) => r.json.runId));
    expect(ids.size).toBe(1);
    const after = await objectIds();
    expect([...after].filter((id) => !before.has(id))).toEqual([objectIdOf([...ids][0]!)]);
  });

  it('does not let two keys share a run', async () => {
    const a = await createRun({ prompt: 'same' }, { 'idempotency-key': freshKey('a') });
    const b = await createRun({ prompt: 'same' }, { 'idempotency-key': freshKey('b') });
    expect(a.res.status).toBe(202);
    expect(b.res.status).toBe(202);
    expect(a.json.runId).not.toBe(b.json.runId);
  });
});

describe('GET /runs/:runId', () => {
  it('answers the record', async () => {
    const { json } = await createRun({ prompt: 'r', threadId: 't1' });
    await feed(json.runId, texts(0, 3));
    const res = await api(`/runs/${json.runId}`);
    expect(res.status).toBe(200);
    const record = (await res.json()) as Record<string, unknown>;
    expect(record).toMatchObject({ runId: json.runId, threadId: 't1', status: 'running', lastSeq: 2, startedAt: json.startedAt });
    expect(record.updatedAt as number).toBeGreaterThanOrEqual(json.updatedAt as number);
    expect(record.links).toEqual(json.links);
  });

  it('answers 404 run_not_found for an unknown run id', async () => {
    await expectError(await api(`/runs/${UNKNOWN_RUN}`), 404, 'run_not_found');
  });

  it.each(['abc', 'run_XYZ', `run_${'A'.repeat(32)}`, `run_${'0'.repeat(31)}`, `run_${'0'.repeat(33)}`, 'run_'])(
    'answers a malformed run id %s exactly like an unknown one',
    async (runId) => {
      await expectError(await api(`/runs/${runId}`), 404, 'run_not_found');
    },
  );
});

describe('rejected POST /runs', () => {
  const valid = { prompt: 'hello' };
  const json = (value: unknown) => JSON.stringify(value);
  const cases: Array<{ name: string; body: BodyInit | null; headers?: Record<string, string>; status: number; code: string }> = [
    { name: 'invalid JSON', body: '{"prompt": ', status: 400, code: 'invalid_json' },
    { name: 'invalid UTF-8', body: new Uint8Array([0x7b, 0x22, 0x70, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]), status: 400, code: 'invalid_json' },
    { name: 'no body', body: null, status: 400, code: 'invalid_json' },
    { name: 'a JSON array', body: json([valid]), status: 400, code: 'invalid_body' },
    { name: 'a JSON string', body: json('hello'), status: 400, code: 'invalid_body' },
    { name: 'JSON null', body: 'null', status: 400, code: 'invalid_body' },
    { name: 'neither prompt nor messages', body: json({ threadId: 'x' }), status: 400, code: 'invalid_body' },
    { name: 'both prompt and messages', body: json({ prompt: 'a', messages: [{ role: 'user', content: 'b' }] }), status: 400, code: 'invalid_body' },
    { name: 'an empty prompt', body: json({ prompt: '' }), status: 400, code: 'invalid_body' },
    { name: 'a blank prompt', body: json({ prompt: '  \n ' }), status: 400, code: 'invalid_body' },
    { name: 'a prompt that is not a string', body: json({ prompt: 42 }), status: 400, code: 'invalid_body' },
    { name: 'messages not an array', body: json({ messages: { role: 'user', content: 'x' } }), status: 400, code: 'invalid_body' },
    { name: 'empty messages', body: json({ messages: [] }), status: 400, code: 'invalid_body' },
    { name: 'a message with a bad role', body: json({ messages: [{ role: 'robot', content: 'x' }] }), status: 400, code: 'invalid_body' },
    { name: 'a message with bad content', body: json({ messages: [{ role: 'user', content: 5 }] }), status: 400, code: 'invalid_body' },
    { name: 'a message that is not an object', body: json({ messages: ['hi'] }), status: 400, code: 'invalid_body' },
    { name: 'a threadId too long', body: json({ ...valid, threadId: 'a'.repeat(129) }), status: 400, code: 'invalid_body' },
    { name: 'a threadId with bad characters', body: json({ ...valid, threadId: 'a/b' }), status: 400, code: 'invalid_body' },
    { name: 'an empty threadId', body: json({ ...valid, threadId: '' }), status: 400, code: 'invalid_body' },
    { name: 'an unknown harness', body: json({ ...valid, harness: 'gpt-shell' }), status: 400, code: 'unknown_harness' },
    { name: 'an unknown body field', body: json({ ...valid, temperature: 1 }), status: 400, code: 'invalid_body' },
    { name: 'an unknown demo option', body: json({ ...valid, harnessOptions: { chunkz: 3 } }), status: 400, code: 'invalid_harness_options' },
    { name: 'negative demo chunks', body: json({ ...valid, harnessOptions: { chunks: -1 } }), status: 400, code: 'invalid_harness_options' },
    { name: 'non-integer demo chunks', body: json({ ...valid, harnessOptions: { chunks: 1.5 } }), status: 400, code: 'invalid_harness_options' },
    { name: 'demo options not an object', body: json({ ...valid, harnessOptions: [1] }), status: 400, code: 'invalid_harness_options' },
    { name: 'a model that is not a string', body: json({ ...valid, model: 7 }), status: 400, code: 'invalid_body' },
    { name: 'a body over 1 MiB', body: json({ prompt: 'x'.repeat(1_048_576) }), status: 413, code: 'payload_too_large' },
    { name: 'a text/plain body', body: json(valid), headers: { 'content-type': 'text/plain' }, status: 415, code: 'unsupported_media_type' },
    { name: 'a form body', body: 'prompt=hello', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, code: 'unsupported_media_type' },
    { name: 'a JSON body with no Content-Type', body: json(valid), headers: { 'content-type': '' }, status: 415, code: 'unsupported_media_type' },
    { name: 'JSON nested 10,000 levels deep in a message', body: `{"messages":[{"role":"user","content":"x","metadata":${'['.repeat(10_000)}${']'.repeat(10_000)}}]}`, status: 400, code: 'invalid_body' },
    { name: 'JSON nested 10,000 levels deep in harnessOptions', body: `{"prompt":"x","harnessOptions":{"chunks":${'{"a":'.repeat(10_000)}1${'}'.repeat(10_000)}}}`, status: 400, code: 'invalid_body' },
    { name: 'JSON nested 65 levels deep at the top', body: `${'{"a":'.repeat(65)}1${'}'.repeat(65)}`, status: 400, code: 'invalid_body' },
    { name: '__proto__ at the top level', body: '{"prompt":"x","__proto__":{"harness":"claude-code"}}', status: 400, code: 'invalid_body' },
    { name: 'constructor at the top level', body: '{"prompt":"x","constructor":{}}', status: 400, code: 'invalid_body' },
    { name: '__proto__ in harnessOptions', body: '{"prompt":"x","harness":"claude-code","harnessOptions":{"__proto__":{"maxTurns":"1; touch /tmp/x; #"}}}', status: 400, code: 'invalid_body' },
    { name: 'prototype in a message', body: '{"messages":[{"role":"user","content":"x","prototype":1}]}', status: 400, code: 'invalid_body' },
    { name: '__proto__ nested in a message', body: '{"messages":[{"role":"user","content":[{"type":"text","content":"x","meta":{"__proto__":{"role":"system"}}}]}]}', status: 400, code: 'invalid_body' },
    { name: 'an unknown chat option', body: json({ ...valid, harness: 'chat', harnessOptions: { evil: 1 } }), status: 400, code: 'invalid_harness_options' },
    { name: 'a string maxTurns', body: json({ ...valid, harness: 'claude-code', harnessOptions: { maxTurns: '1; touch /tmp/x; #' } }), status: 400, code: 'invalid_harness_options' },
    { name: 'a codex option that is not in its enum', body: json({ ...valid, harness: 'codex', harnessOptions: { modelReasoningEffort: 'max"' } }), status: 400, code: 'invalid_harness_options' },
    { name: 'permissionMode bypassPermissions', body: json({ ...valid, harness: 'claude-code', harnessOptions: { permissionMode: 'bypassPermissions' } }), status: 400, code: 'option_not_allowed' },
    { name: 'codex danger-full-access', body: json({ ...valid, harness: 'codex', harnessOptions: { sandboxMode: 'danger-full-access' } }), status: 400, code: 'option_not_allowed' },
    { name: 'a demo run over RUN_MAX_EVENTS', body: json({ ...valid, harnessOptions: { chunks: 1_000_000, delayMs: 0 } }), status: 400, code: 'invalid_harness_options' },
    { name: 'a demo run of about 694 days', body: json({ ...valid, harnessOptions: { chunks: 99_000, delayMs: 60_000 } }), status: 400, code: 'invalid_harness_options' },
    { name: 'a demo run of about 1 TB', body: json({ ...valid, harnessOptions: { chunks: 99_000, chunkBytes: 1_000_000, delayMs: 0 } }), status: 400, code: 'invalid_harness_options' },
    { name: 'a model with shell syntax', body: json({ ...valid, model: "x'; touch /tmp/x; '" }), status: 400, code: 'invalid_body' },
  ];

  it('checks that listDurableObjectIds sees a created run, so "nothing persisted" below means something', async () => {
    const before = await objectIds();
    const { json: created } = await createRun(valid);
    const after = await objectIds();
    expect([...after].filter((id) => !before.has(id))).toEqual([objectIdOf(created.runId)]);
  });

  it.each(cases)('rejects $name with $status $code and persists nothing', async ({ body, headers, status, code }) => {
    // With a key the would-be run id is known, so its object can be looked for by id.
    const key = freshKey('rejected');
    const before = await objectIds();
    await expectError(await postRuns(body, { 'idempotency-key': key, ...headers }), status, code);
    const after = await objectIds();
    expect([...after].filter((id) => !before.has(id))).toEqual([]);
    // The key was not consumed: a valid body under it creates a new run.
    const { res } = await createRun(valid, { 'idempotency-key': key });
    expect(res.status).toBe(202);
  });

  it('names the offending field in the message', async () => {
    const { error } = await expectError(await postRuns(json({ messages: [{ role: 'user', content: 'ok' }, { role: 'robot', content: 'x' }] })), 400, 'invalid_body');
    expect(error.message).toContain('messages[1].role');
    const options = await expectError(await postRuns(json({ ...valid, harnessOptions: { chunks: -1 } })), 400, 'invalid_harness_options');
    expect(options.error.message).toContain('harnessOptions.chunks');
    const reserved = await expectError(await postRuns('{"messages":[{"role":"user","content":"x","metadata":{"a":[{"constructor":1}]}}]}'), 400, 'invalid_body');
    expect(reserved.error.message).toContain('messages[0].metadata.a[0].constructor');
  });

  it('rejects a declared Content-Length over 1 MiB (413) without reading the body', async () => {
    const before = await objectIds();
    const piece = new Uint8Array(65_536).fill(0x20);
    const declared = 4 * 1_048_576;
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= declared) return controller.close();
        sent += piece.byteLength;
        controller.enqueue(piece);
      },
    });
    const headers = { 'content-type': 'application/json', 'content-length': String(declared) };
    const request = new Request(`${BASE}/runs`, { method: 'POST', headers, body: stream });
    await expectError(await exports.default.fetch(request), 413, 'payload_too_large');
    // The runtime may read ahead a little; a Worker that read the body would have pulled it all.
    expect(sent).toBeLessThan(1_048_576);
    expect([...(await objectIds())].filter((id) => !before.has(id))).toEqual([]);
  });

  it('rejects a streamed body over 1 MiB with no Content-Length (413), counting bytes as they arrive', async () => {
    const before = await objectIds();
    const piece = new TextEncoder().encode(`{"prompt":"${'x'.repeat(262_144)}`);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        // Never ends on its own: only a reader that stops at the limit lets this request finish.
        sent += piece.byteLength;
        controller.enqueue(piece);
      },
    });
    const request = new Request(`${BASE}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: stream });
    expect(request.headers.get('content-length')).toBeNull();
    await expectError(await exports.default.fetch(request), 413, 'payload_too_large');
    expect(sent).toBeGreaterThan(1_048_576);
    expect([...(await objectIds())].filter((id) => !before.has(id))).toEqual([]);
  });

  it.each([
    { name: 'a space', key: 'has space' },
    { name: 'too long', key: 'k'.repeat(256) },
    { name: 'nothing in it', key: '' },
  ])('rejects an Idempotency-Key with $name (400 bad_request) and persists nothing', async ({ key }) => {
    const before = await objectIds();
    const headers = new Headers({ 'content-type': 'application/json' });
    headers.set('idempotency-key', key);
    await expectError(await api('/runs', { method: 'POST', headers, body: json(valid) }), 400, 'bad_request');
    expect([...(await objectIds())].filter((id) => !before.has(id))).toEqual([]);
  });
});

describe('GET /runs/:runId/ws', () => {
  it.each(['abc', '-2', '1.5', '1e3', ' 1', '0x1'])('answers fromSeq=%s with 400 invalid_from_seq before the upgrade', async (fromSeq) => {
    const { json } = await createRun();
    const res = await api(`/runs/${json.runId}/ws?fromSeq=${encodeURIComponent(fromSeq)}`, { headers: { upgrade: 'websocket' } });
    expect(res.webSocket).toBeNull();
    await expectError(res, 400, 'invalid_from_seq');
  });

  it('answers an unknown run with 404 before the upgrade', async () => {
    const res = await api(`/runs/${UNKNOWN_RUN}/ws`, { headers: { upgrade: 'websocket' } });
    expect(res.webSocket).toBeNull();
    await expectError(res, 404, 'run_not_found');
    await expectError(await api('/runs/nope/ws', { headers: { upgrade: 'websocket' } }), 404, 'run_not_found');
  });

  it('answers a plain GET with 426 upgrade_required', async () => {
    const { json } = await createRun();
    await expectError(await api(`/runs/${json.runId}/ws`), 426, 'upgrade_required');
  });

  it('upgrades a valid request (101)', async () => {
    const { json } = await createRun();
    const tail = await openTail(json.runId, '?fromSeq=-1');
    tail.ws.close(1000, 'done');
  });
});

describe('GET /runs/:runId/events errors', () => {
  it('answers a bad fromSeq with 400 invalid_from_seq', async () => {
    const { json } = await createRun();
    await expectError(await api(`/runs/${json.runId}/events?fromSeq=x`), 400, 'invalid_from_seq');
    await expectError(await api(`/runs/${json.runId}/events?fromSeq=-2`), 400, 'invalid_from_seq');
    await expectError(await api(`/runs/${json.runId}/events`, { headers: { 'last-event-id': 'nope' } }), 400, 'invalid_from_seq');
  });

  it('answers an unknown run with 404 run_not_found', async () => {
    await expectError(await api(`/runs/${UNKNOWN_RUN}/events`), 404, 'run_not_found');
    await expectError(await api(`/runs/${UNKNOWN_RUN}/events`, { headers: { accept: 'text/event-stream' } }), 404, 'run_not_found');
    await expectError(await api('/runs/abc/events'), 404, 'run_not_found');
  });
});

describe('POST /runs/:runId/cancel', () => {
  it('aborts a running run, idempotently, and rejects later chunks', async () => {
    const { json } = await createRun();
    const runId = json.runId;
    await feed(runId, texts(0, 3));
    const before = Date.now();
    const res = await api(`/runs/${runId}/cancel`, { method: 'POST' });
    expect(res.status).toBe(200);
    const cancelled = (await res.json()) as Record<string, unknown>;
    expect(cancelled).toMatchObject({ runId, status: 'aborted', lastSeq: 2 });
    expect(cancelled.finishedAt).toBeTypeOf('number');
    expect(cancelled.finishedAt as number).toBeGreaterThanOrEqual(before - 1000);
    expect(cancelled.links).toEqual(json.links);

    const again = await api(`/runs/${runId}/cancel`, { method: 'POST' });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(cancelled);

    expect(await feed(runId, texts(3, 2))).toBe('rejected');
    expect(await feed(runId, [finished(runId)])).toBe('rejected');
    const record = (await (await api(`/runs/${runId}`)).json()) as Record<string, unknown>;
    expect(record).toEqual(cancelled);
  });

  it('leaves a completed run completed', async () => {
    const { json } = await createRun();
    await feed(json.runId, [...texts(0, 1), finished(json.runId)]);
    const record = await (await api(`/runs/${json.runId}`)).json();
    const res = await api(`/runs/${json.runId}/cancel`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(record);
  });

  it('answers an unknown or malformed run with 404', async () => {
    await expectError(await api(`/runs/${UNKNOWN_RUN}/cancel`, { method: 'POST' }), 404, 'run_not_found');
    await expectError(await api('/runs/abc/cancel', { method: 'POST' }), 404, 'run_not_found');
  });

  it('gives a tail attached after the cancel the aborted status frame and close 1000', async () => {
    const { json } = await createRun();
    await feed(json.runId, texts(0, 2));
    await api(`/runs/${json.runId}/cancel`, { method: 'POST' });
    const tail = await openTail(json.runId);
    expect((await tail.closed).code).toBe(1000);
    expect(tail.seqs()).toEqual(range(0, 1));
    const last = tail.frames.at(-1)!;
    expect(isStatusFrame(last) && last.record.status).toBe('aborted');
    expect(tail.frames.filter(isStatusFrame)).toHaveLength(1);
  });

  it('settles a tail that was attached when the cancel came', async () => {
    const { json } = await createRun();
    const tail = await openTail(json.runId);
    await feed(json.runId, texts(0, 2));
    await tail.until(() => tail.seqs().length === 2);
    await api(`/runs/${json.runId}/cancel`, { method: 'POST' });
    expect((await tail.closed).code).toBe(1000);
    const last = tail.frames.at(-1)!;
    expect(isStatusFrame(last) && last.record.status).toBe('aborted');
    expect(tail.seqs()).toEqual([0, 1]);
  });

  it('cancels on an abort frame from the WebSocket client', async () => {
    const { json } = await createRun();
    const tail = await openTail(json.runId);
    tail.ws.send(JSON.stringify({ type: 'abort', runId: json.runId }));
    expect((await tail.closed).code).toBe(1000);
    const record = (await (await api(`/runs/${json.runId}`)).json()) as Record<string, unknown>;
    expect(record.status).toBe('aborted');
  });
});

describe('other routes', () => {
  it('answers GET /health', async () => {
    const res = await api('/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ ok: true, auth: 'off' });
  });

  it.each([
    ['GET', '/nope'],
    ['GET', '/runs'],
    ['DELETE', `/runs/${UNKNOWN_RUN}`],
    ['GET', `/runs/${UNKNOWN_RUN}/cancel`],
  ])('answers %s %s with 404 not_found as JSON', async (method, path) => {
    await expectError(await api(path, { method }), 404, 'not_found');
  });
});
