import { Hono } from 'hono';
import { readConfig, type RelayEnv } from '../config.ts';
import {
  isRunId,
  parseCreateRunBody,
  parseSeqCursor,
  ProtocolError,
  UnknownHarnessError,
  type RunView,
  type RunnerRunRequest,
} from '../protocol/index.ts';
import { RUN_OBJECT_PATHS } from '../run/run-object.ts';
import { readJsonBody } from './body.ts';
import { ApiError, notFound, onError, runNotFound } from './errors.ts';
import { canonicalJson, isIdempotencyKey, newRunId, runIdForKey, sha256Hex } from './ids.ts';

type AppEnv = { Bindings: RelayEnv };

export const app = new Hono<AppEnv>();

app.onError(onError);
app.notFound(notFound);

app.get('/health', (c) => c.json({ ok: true }));

function runStub(env: RelayEnv, runId: string) {
  return env.RUNS.get(env.RUNS.idFromName(runId));
}

function links(runId: string) {
  const self = `/runs/${runId}`;
  return { self, ws: `${self}/ws`, events: `${self}/events` };
}

function runBody(record: RunView) {
  return { ...record, links: links(record.runId) };
}

/** A run id that is not well-formed answers exactly like an unknown run. */
function requireRunId(raw: string): string {
  if (!isRunId(raw)) throw runNotFound(raw);
  return raw;
}

/** `fromSeq`, or `offset` as `@tanstack/ai-client` sends it on reconnect. */
function requireFromSeq(url: URL, lastEventId?: string | null): number {
  const raw = lastEventId ?? url.searchParams.get('fromSeq') ?? url.searchParams.get('offset');
  const fromSeq = parseSeqCursor(raw);
  if (fromSeq === null) {
    throw new ApiError(400, 'invalid_from_seq', `fromSeq must be an integer >= -1 (the last seq you have, -1 for everything); got ${JSON.stringify(raw)}.`);
  }
  return fromSeq;
}

app.post('/runs', async (c) => {
  const key = c.req.header('idempotency-key');
  if (key !== undefined && !isIdempotencyKey(key)) {
    throw new ApiError(400, 'bad_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
  }
  const config = readConfig(c.env);
  let input;
  try {
    input = parseCreateRunBody(await readJsonBody(c.req.raw), config.defaultHarness);
  } catch (error) {
    if (error instanceof UnknownHarnessError) throw new ApiError(400, 'unknown_harness', error.message);
    if (error instanceof ProtocolError) throw new ApiError(400, 'invalid_body', error.message);
    throw error;
  }
  const runId = key === undefined ? newRunId() : await runIdForKey(key);
  const request: RunnerRunRequest = { runId, threadId: input.threadId ?? runId, ...input };
  request.threadId = input.threadId ?? runId;
  const requestHash = await sha256Hex(canonicalJson(input));
  const result = await runStub(c.env, runId).create({ runId, threadId: request.threadId, request, requestHash });
  if (result.kind === 'conflict') {
    throw new ApiError(409, 'idempotency_conflict', 'This Idempotency-Key was already used with a different body. Use a new key for a new run.');
  }
  const status = result.kind === 'created' ? 202 : 200;
  return c.json(runBody(result.record), status, { location: `/runs/${runId}` });
});

app.get('/runs/:runId', async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const record = await runStub(c.env, runId).record(runId);
  if (!record) throw runNotFound(runId);
  return c.json(runBody(record));
});

app.post('/runs/:runId/cancel', async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const record = await runStub(c.env, runId).cancel(runId);
  if (!record) throw runNotFound(runId);
  return c.json(runBody(record));
});

/** Streams go to the object untouched, so the upgrade lands there and can hibernate. */
function forward(env: RelayEnv, runId: string, path: string, params: Record<string, string>, request: Request): Promise<Response> {
  const target = new URL(`https://run-object${path}`);
  target.searchParams.set('runId', runId);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  return runStub(env, runId).fetch(new Request(target, { headers: request.headers, signal: request.signal }));
}

app.get('/runs/:runId/ws', async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const fromSeq = requireFromSeq(new URL(c.req.url));
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
    throw new ApiError(426, 'upgrade_required', 'This is a WebSocket endpoint: connect with a WebSocket client, or use /events for SSE or NDJSON.');
  }
  return forward(c.env, runId, RUN_OBJECT_PATHS.ws, { fromSeq: String(fromSeq), canCancel: '1' }, c.req.raw);
});

app.get('/runs/:runId/events', async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const fromSeq = requireFromSeq(new URL(c.req.url), c.req.header('last-event-id'));
  const format = c.req.header('accept')?.includes('text/event-stream') ? 'sse' : 'ndjson';
  return forward(c.env, runId, RUN_OBJECT_PATHS.events, { fromSeq: String(fromSeq), format }, c.req.raw);
});
