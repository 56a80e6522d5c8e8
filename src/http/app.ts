import { Hono } from 'hono';
import { readConfig, type RelayConfig, type RelayEnv } from '../config.ts';
import {
  HarnessOptionsError,
  isRunId,
  OptionNotAllowedError,
  parseCreateRunBody,
  parseDemoOptions,
  requireDemoWithinBudget,
  parseSeqCursor,
  ProtocolError,
  toRpcValue,
  SecretNotAllowedError,
  ToolNotAllowedError,
  APPROVAL_TOOL,
  MAX_TOOL_RESULT_BYTES,
  parseAttachTokenRequest,
  parseToolResult,
  toolDescriptors,
  type ToolResult,
  UnknownHarnessError,
  type CreateRunInput,
  type RunView,
  type RunnerRunRequest,
} from '../protocol/index.ts';
import { RUN_OBJECT_PATHS, type CreateRunCall } from '../run/run-object.ts';
import { attachTokenKey, mintAttachToken } from './attach-token.ts';
import { requireApiAccess, requireApiToken, requireCredentials, requireRespondAccess, requireRunAccess, runObjectName, runStub, type AppEnv } from './auth.ts';
import { admitRun, type Slot } from './admission.ts';
import { limitBody, readJsonBody } from './body.ts';
import { cors } from './cors.ts';
import { requireHarnessAvailable } from './preflight.ts';
import { requireJsonBody, requireLoopbackHostWhenOpen, requireTrustedOrigin } from './request-guards.ts';
import { ApiError, notFound, onError, runNotFound, toolAnswerError } from './errors.ts';
import { canonicalJson, isIdempotencyKey, newRunId, runIdForKey, sha256Hex } from './ids.ts';
import { withSubprotocol } from './subprotocol.ts';
import { beginTurn, threadRoutes } from './threads.ts';

export const app = new Hono<AppEnv>();

app.onError(onError);
app.notFound(notFound);

// Middleware first: Hono runs handlers in registration order. The host and
// origin guards come before CORS and credentials: a rebound or cross-site
// request is refused before anything reads it.
app.use('*', requireLoopbackHostWhenOpen);
app.use('*', cors);
app.use('*', requireTrustedOrigin);
app.use('*', requireJsonBody);
for (const prefix of ['/runs', '/threads']) {
  app.use(prefix, requireCredentials);
  app.use(`${prefix}/*`, requireCredentials);
}
// Attach tokens read one run; nothing under /threads.
app.use('/threads', requireApiToken);
app.use('/threads/*', requireApiToken);

app.get('/health', (c) => c.json({ ok: true, auth: readConfig(c.env).apiToken === undefined ? 'off' : 'on' }));

async function attachToken(env: RelayEnv, tenant: string | null, runId: string, respond = false) {
  const config = readConfig(env);
  return mintAttachToken(await attachTokenKey(config), { run: runId, tenant, respond }, Date.now(), config.attachTokenTtlMs);
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

/** A body error as the API names it: which rule it broke decides the code. */
function createRunError(error: unknown): unknown {
  if (error instanceof UnknownHarnessError) return new ApiError(400, 'unknown_harness', error.message);
  if (error instanceof OptionNotAllowedError) return new ApiError(400, 'option_not_allowed', error.message);
  if (error instanceof HarnessOptionsError) return new ApiError(400, 'invalid_harness_options', error.message);
  if (error instanceof SecretNotAllowedError) return new ApiError(400, 'secret_not_allowed', error.message);
  if (error instanceof ToolNotAllowedError) return new ApiError(400, 'tool_not_allowed', error.message);
  if (error instanceof ProtocolError) return new ApiError(400, 'invalid_body', error.message);
  return error;
}

/** The operator's `DEFAULT_HARNESS_OPTIONS` under the caller's: the runner always gets an explicit mode. */
function withHarnessDefaults(input: CreateRunInput, defaults: RelayConfig['defaultHarnessOptions']): CreateRunInput {
  const base = defaults[input.harness];
  if (base === undefined) return input;
  return { ...input, harnessOptions: { ...base, ...input.harnessOptions } };
}

app.post('/runs', limitBody(), async (c) => {
  const { tenant } = requireApiAccess(c);
  const key = c.req.header('idempotency-key');
  if (key !== undefined && !isIdempotencyKey(key)) {
    throw new ApiError(400, 'bad_request', 'Idempotency-Key must be 1 to 255 visible ASCII characters.');
  }
  const config = readConfig(c.env);
  let asked: CreateRunInput;
  try {
    asked = parseCreateRunBody(await readJsonBody(c), {
      defaultHarness: config.defaultHarness,
      allowUnsafe: config.allowUnsafeHarnessOptions,
      workspace: { allowedSecrets: config.workspaceSecrets, allowLocalSources: config.apiToken === undefined },
      tools: { webhookOrigins: config.tools.webhookOrigins, allowLoopbackHttp: config.apiToken === undefined, webhookSecretSet: config.tools.webhookSecret !== undefined },
    });
  } catch (error) {
    throw createRunError(error);
  }
  // What the caller asked decides idempotency; the operator's defaults may change between retries.
  const requestHash = await sha256Hex(canonicalJson(asked));
  const input = withHarnessDefaults(asked, config.defaultHarnessOptions);
  if (input.harness === 'demo') {
    try {
      requireDemoWithinBudget(parseDemoOptions(input.harnessOptions), config.limits);
    } catch (error) {
      throw createRunError(error);
    }
  }
  const runId = key === undefined ? newRunId() : await runIdForKey(key, tenant);
  const threadId = input.threadId ?? runId;
  const stub = runStub(c.env, tenant, runId);
  // A retry (same Idempotency-Key) goes straight to its run: it is not a new turn.
  const retry = key !== undefined && (await stub.record(runId)) !== null;
  let call: CreateRunCall;
  let slot: Slot | undefined;
  // The runner is told what each tool is, never where a webhook lives: the object keeps that.
  const { tools: ownTools, ...turnInput } = input;
  // Approvals are client tool calls of the run like any other; the model is never offered the tool.
  const tools = input.approvals === 'client' ? [...(ownTools ?? []), APPROVAL_TOOL] : ownTools;
  const runnerRequest: RunnerRunRequest = { ...turnInput, runId, threadId, tenant, ...(ownTools ? { tools: toolDescriptors(ownTools) } : {}) };
  if (retry) {
    call = { runId, threadId, requestHash, request: runnerRequest, ...(tools ? { tools } : {}) };
  } else {
    await requireHarnessAvailable(input, c.env, config);
    slot = await admitRun(c.env, config, tenant, runId);
    const turn = await beginTurn(c.env, { tenant, threadId, runId, runKey: runObjectName(tenant, runId), userMessages: toRpcValue(input.messages) }).catch(
      async (error: unknown) => {
        // Refused before the run existed (thread_busy, thread_full): the slot goes back.
        if (error instanceof ApiError) await slot?.giveBack();
        throw error;
      },
    );
    // The run stores only its own turn (the thread keeps the transcript once); the runner
    // gets the thread so far, harness tool calls it already ran stripped, before it.
    call = { runId, threadId, requestHash, request: runnerRequest, history: turn.history, threadKey: turn.threadKey, sandboxId: turn.sandboxId, ...(tools ? { tools } : {}) };
  }
  const result = await stub.create(toRpcValue(call));
  // This request made no run (another made it, or holds its id): a slot it took goes back.
  if (result.kind !== 'created') await slot?.giveBack();
  if (result.kind === 'unreadable') throw new ApiError(409, 'run_unreadable', result.reason);
  if (result.kind === 'conflict') {
    throw new ApiError(409, 'idempotency_conflict', 'This Idempotency-Key was already used with a different body. Use a new key for a new run.');
  }
  const status = result.kind === 'created' ? 202 : 200;
  // The creator's browser may answer the run's client tool calls with this one (SPEC "Interactive runs").
  const { attachToken: token } = await attachToken(c.env, tenant, runId, true);
  return c.json({ ...runBody(result.record), attachToken: token }, status, { location: `/runs/${runId}` });
});

app.get('/runs/:runId', async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const { tenant } = requireRunAccess(c, runId);
  // A client following the run: a live run with no pump (the object restarted) reattaches now.
  const found = await runStub(c.env, tenant, runId).ensureDriving(runId);
  if (found.kind === 'unreadable') throw new ApiError(410, 'run_unreadable', found.reason);
  if (found.kind === 'missing') throw runNotFound(runId);
  return c.json(runBody(found.record));
});

app.post('/runs/:runId/cancel', async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const { tenant } = requireApiAccess(c);
  const found = await runStub(c.env, tenant, runId).cancel(runId);
  if (found.kind === 'unreadable') throw new ApiError(409, 'run_unreadable', found.reason);
  if (found.kind === 'missing') throw runNotFound(runId);
  return c.json(runBody(found.record));
});

app.post('/runs/:runId/attach-token', limitBody(), async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const { tenant } = requireApiAccess(c);
  // Read-only unless asked: a token that may answer tool calls is a token that may act on the run.
  let respond = false;
  if (c.req.header('content-length') !== '0' && c.req.raw.body !== null) {
    try {
      respond = parseAttachTokenRequest(await readJsonBody(c)).respond;
    } catch (error) {
      throw createRunError(error);
    }
  }
  if (!(await runStub(c.env, tenant, runId).record(runId))) throw runNotFound(runId);
  return c.json(await attachToken(c.env, tenant, runId, respond));
});

/** SPEC "Interactive runs": a client tool call's answer. First answer wins. */
app.post('/runs/:runId/tool-results', limitBody(MAX_TOOL_RESULT_BYTES), async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const { tenant } = requireRespondAccess(c, runId);
  let result: ToolResult;
  try {
    result = parseToolResult(await readJsonBody(c));
  } catch (error) {
    throw createRunError(error);
  }
  const answered = await runStub(c.env, tenant, runId).answerToolCall(runId, toRpcValue(result));
  if (answered.kind === 'missing') throw runNotFound(runId);
  if (answered.kind !== 'answered') throw toolAnswerError(answered.kind, result.toolCallId);
  return c.json(runBody(answered.record));
});

/**
 * Streams go to the object untouched, so the upgrade lands there and can
 * hibernate. Credentials stay here; the object's own 404 is replaced by the
 * Worker's, so an unknown run reads the same on every route.
 */
async function forward(env: RelayEnv, tenant: string | null, runId: string, path: string, params: Record<string, string>, request: Request): Promise<Response> {
  const target = new URL(`https://run-object${path}`);
  target.searchParams.set('runId', runId);
  for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
  const headers = new Headers(request.headers);
  headers.delete('authorization');
  headers.delete('sec-websocket-protocol');
  const response = await runStub(env, tenant, runId).fetch(new Request(target, { headers, signal: request.signal }));
  if (response.status === 404) {
    await response.body?.cancel();
    throw runNotFound(runId);
  }
  return response;
}

app.get('/runs/:runId/ws', async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const fromSeq = requireFromSeq(new URL(c.req.url));
  if (c.req.header('upgrade')?.toLowerCase() !== 'websocket') {
    throw new ApiError(426, 'upgrade_required', 'This is a WebSocket endpoint: connect with a WebSocket client, or use /events for SSE or NDJSON.');
  }
  // Only the API token (or auth off) may stop the run with an `abort` frame; an attach token only reads.
  const { tenant, canCancel, canRespond } = requireRunAccess(c, runId);
  const rights = { canCancel: canCancel ? '1' : '0', canRespond: canRespond ? '1' : '0' };
  const response = await forward(c.env, tenant, runId, RUN_OBJECT_PATHS.ws, { fromSeq: String(fromSeq), ...rights }, c.req.raw);
  return withSubprotocol(response, c.req.raw);
});

app.get('/runs/:runId/events', async (c) => {
  const runId = requireRunId(c.req.param('runId'));
  const fromSeq = requireFromSeq(new URL(c.req.url), c.req.header('last-event-id'));
  const format = c.req.header('accept')?.includes('text/event-stream') ? 'sse' : 'ndjson';
  const { tenant } = requireRunAccess(c, runId);
  return forward(c.env, tenant, runId, RUN_OBJECT_PATHS.events, { fromSeq: String(fromSeq), format }, c.req.raw);
});

threadRoutes(app);
