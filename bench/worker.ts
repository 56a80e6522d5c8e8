import { Hono } from 'hono';
import { app } from '../src/http/app.ts';
import { newRunId } from '../src/http/ids.ts';
import { parseCreateRunBody, toRpcValue, type RunnerRunRequest } from '../src/protocol/index.ts';
import type { RelayEnv } from '../src/config.ts';
import type { BenchEnv } from './bench-env.ts';

/**
 * The bench Worker: the product's Hono app and Durable Objects (metered,
 * bound under the product's binding names), plus bench-only peers under
 * `/bench/`: the reference layout (`BaselineRunObject`), the storage-free
 * pipe (`PipeObject`) and the raw limits (`LimitsObject`). Never deployed.
 * The entry module that exports every class is generated (config.ts).
 */
export { MeasuredRunObject } from './measured-run-object.ts';
export { BaselineRunObject } from './baseline-object.ts';
export { PipeObject } from './pipe-object.ts';
export { LimitsObject } from './limits-object.ts';

const bench = new Hono<{ Bindings: BenchEnv }>().basePath('/bench');

type PeerNamespace = 'BASELINE' | 'PIPE';
const PEERS: Record<string, PeerNamespace> = { baseline: 'BASELINE', pipe: 'PIPE' };

function peerStub(env: BenchEnv, peer: string, runId: string) {
  const binding = PEERS[peer];
  if (!binding) throw new Error(`unknown peer ${peer}`);
  const namespace = env[binding];
  return namespace.get(namespace.idFromName(runId));
}

bench.post('/:peer/runs', async (c) => {
  const input = parseCreateRunBody(await c.req.json(), { defaultHarness: 'demo', allowUnsafe: false });
  const runId = newRunId();
  const request: RunnerRunRequest = { runId, ...input, threadId: input.threadId ?? runId, tenant: null };
  await peerStub(c.env, c.req.param('peer'), runId).start(toRpcValue(request));
  return c.json({ runId }, 202);
});

bench.get('/:peer/runs/:runId/ws', async (c) => {
  const runId = c.req.param('runId');
  const target = new URL('https://peer/ws');
  target.searchParams.set('runId', runId);
  target.searchParams.set('fromSeq', c.req.query('fromSeq') ?? '-1');
  return peerStub(c.env, c.req.param('peer'), runId).fetch(new Request(target, { headers: c.req.raw.headers }));
});

bench.get('/:peer/runs/:runId/stats', async (c) => {
  const runId = c.req.param('runId');
  const peer = c.req.param('peer');
  if (peer === 'ours') return c.json(await c.env.RUNS.get(c.env.RUNS.idFromName(runId)).benchStats(runId));
  return c.json(await peerStub(c.env, peer, runId).benchStats(runId));
});

const limits = (env: BenchEnv) => env.LIMITS.get(env.LIMITS.idFromName('limits'));

bench.post('/limits/sqlite/reset', async (c) => {
  await limits(c.env).reset();
  return c.json({ ok: true });
});

bench.post('/limits/sqlite/insert', async (c) => {
  return c.json(await limits(c.env).insert(Number(c.req.query('n') ?? '0'), Number(c.req.query('deltaBytes') ?? '6')));
});

bench.get('/limits/ws', (c) => limits(c.env).fetch(new Request('https://limits/ws', { headers: c.req.raw.headers })));

bench.get('/limits/replay', (c) =>
  limits(c.env).fetch(new Request(`https://limits/replay?fromSeq=${encodeURIComponent(c.req.query('fromSeq') ?? '-1')}`, { headers: c.req.raw.headers })),
);

export default {
  fetch(request: Request, env: BenchEnv, ctx: ExecutionContext): Response | Promise<Response> {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/bench/')) return bench.fetch(request, env, ctx);
    // The bench's RUNS is the product's binding with a metered class behind it.
    return app.fetch(request, env as unknown as RelayEnv, ctx);
  },
} satisfies ExportedHandler<BenchEnv>;
