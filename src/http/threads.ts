import type { Hono } from 'hono';
import type { ModelMessage } from '@tanstack/ai';
import { readConfig, type RelayEnv } from '../config.ts';
import { isThreadId, parseMessages, parseTrustedJson } from '../protocol/index.ts';
import { requireApiAccess, runStub, type AppEnv } from './auth.ts';
import { ApiError } from './errors.ts';

/** Thread objects are named like run objects: scoped by tenant, so one tenant never reaches another's. */
export function threadObjectName(tenant: string | null, threadId: string): string {
  return tenant === null ? `thread:${threadId}` : `thread:${tenant}/${threadId}`;
}

export function threadStub(env: RelayEnv, name: string) {
  return env.THREADS.get(env.THREADS.idFromName(name));
}

function threadNotFound(threadId: string): ApiError {
  return new ApiError(404, 'thread_not_found', `No thread ${threadId} exists. A thread starts with POST /runs and a threadId.`);
}

function requireThreadId(raw: string): string {
  if (!isThreadId(raw)) throw threadNotFound(raw);
  return raw;
}

/**
 * Opens a turn on the run's thread before the run exists: a busy thread
 * refuses (409 `thread_busy`) and nothing is stored; otherwise the thread
 * hands back its transcript for the runner and the sandbox the turn uses.
 */
export async function beginTurn(
  env: RelayEnv,
  turn: { tenant: string | null; threadId: string; runId: string; runKey: string; userMessages: ModelMessage[] },
): Promise<{ history: ModelMessage[]; sandboxId: string; threadKey: string }> {
  const config = readConfig(env);
  const threadKey = threadObjectName(turn.tenant, turn.threadId);
  // RPC typing cannot express ModelMessage's open content; narrow the answer by parsing it.
  const result: unknown = await threadStub(env, threadKey).begin({
    threadId: turn.threadId,
    runId: turn.runId,
    runKey: turn.runKey,
    userMessages: turn.userMessages,
    sandbox: config.sandbox,
    maxMessages: config.limits.maxThreadMessages,
  });
  const answer = result as Partial<Record<'kind' | 'activeRunId' | 'sandboxId' | 'history' | 'messages', unknown>>;
  if (answer.kind === 'busy') {
    throw new ApiError(409, 'thread_busy', `Thread ${turn.threadId} already has an active run (${String(answer.activeRunId)}); wait for it to end or cancel it, then post the next turn.`);
  }
  if (answer.kind === 'full') {
    throw new ApiError(
      409,
      'thread_full',
      `Thread ${turn.threadId} holds ${String(answer.messages)} messages and this turn would take it past MAX_THREAD_MESSAGES (${config.limits.maxThreadMessages}); start a new thread. It stays readable.`,
    );
  }
  if (answer.kind !== 'ok' || typeof answer.sandboxId !== 'string') throw new Error('the thread object answered begin() with an unknown shape');
  if (typeof answer.history !== 'string') throw new Error('the thread object answered begin() without its history');
  const parsed = parseTrustedJson(answer.history, 'history');
  const history = Array.isArray(parsed) && parsed.length === 0 ? [] : parseMessages(parsed, 'history', { source: 'trusted', maxMessages: Number.POSITIVE_INFINITY });
  return { history, sandboxId: answer.sandboxId, threadKey };
}

export function threadRoutes(app: Hono<AppEnv>): void {
  app.get('/threads/:threadId', async (c) => {
    const { tenant } = requireApiAccess(c);
    const threadId = requireThreadId(c.req.param('threadId'));
    const summary = await threadStub(c.env, threadObjectName(tenant, threadId)).summary();
    if (!summary) throw threadNotFound(threadId);
    // SPEC: the runs' records. A run whose storage expired (RUN_TTL_SECONDS) is
    // listed with what the thread remembers of it.
    const runs = await Promise.all(
      summary.runs.map(async (run) => (await runStub(c.env, tenant, run.runId).record(run.runId)) ?? { ...run, threadId }),
    );
    // The active turn's prompt is in no record and in no transcript until the turn ends: a tab that joins mid-turn reads it here.
    const activeTurn =
      summary.activeRunId === null || summary.activeUserMessages === null
        ? null
        : { runId: summary.activeRunId, messages: parseMessages(parseTrustedJson(summary.activeUserMessages, 'activeUserMessages'), 'activeUserMessages', { source: 'trusted', maxMessages: Number.POSITIVE_INFINITY }) };
    return c.json({ threadId: summary.threadId, activeRunId: summary.activeRunId, activeTurn, runs });
  });

  app.get('/threads/:threadId/messages', async (c) => {
    const { tenant } = requireApiAccess(c);
    const threadId = requireThreadId(c.req.param('threadId'));
    const transcript = await threadStub(c.env, threadObjectName(tenant, threadId)).transcript();
    if (transcript === null) throw threadNotFound(threadId);
    return c.json({ threadId, messages: parseTrustedJson(transcript, 'transcript') });
  });
}
