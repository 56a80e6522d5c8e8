/**
 * A test double for the runner, answered from Node through miniflare's
 * `outboundService`: it accepts every run and then says nothing, keeping the
 * stream open. Tests of the log and the tails feed chunks themselves
 * (`RunObject.ingest`) while the run stays `running` with a live pump.
 *
 * Control routes let a test play a runner restart for one run:
 * `POST /control/restart/:runId` hangs up its streams and refuses (503) every
 * reattach from then on; `POST /control/recover/:runId` accepts reattaches
 * again; `GET /control/refused/:runId` counts the refusals.
 */
import { runnerHealth } from '../../container/src/availability.ts';

interface RunState {
  streams: Set<ReadableStreamDefaultController<Uint8Array>>;
  restarting: boolean;
  refused: number;
}

const runs = new Map<string, RunState>();

/** The workerd projects' RUNNER_TOKEN binding: the double refuses (401) what a real runner would. */
export const QUIET_RUNNER_TOKEN = 'quiet-runner-token-0f3a9c7e52';

function state(runId: string): RunState {
  let run = runs.get(runId);
  if (!run) runs.set(runId, (run = { streams: new Set(), restarting: false, refused: 0 }));
  return run;
}

function silentStream(run: RunState): Response {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      controller = c;
      run.streams.add(c);
    },
    cancel() {
      run.streams.delete(controller);
    },
  });
  return new Response(body, { headers: { 'content-type': 'application/x-ndjson' } });
}

export async function quietRunner(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const parts = url.pathname.split('/').filter(Boolean);
  // Like the real runner, /health needs no token: here, its answer for a machine with no CLI and no key.
  if (request.method === 'GET' && url.pathname === '/health') return Response.json(runnerHealth({ PATH: '' }));
  if (parts[0] !== 'control' && request.headers.get('authorization') !== `Bearer ${QUIET_RUNNER_TOKEN}`) {
    return Response.json({ error: { code: 'unauthorized', message: 'quiet runner: no or wrong runner token' } }, { status: 401 });
  }
  if (parts[0] === 'control' && parts[2]) {
    const run = state(parts[2]);
    if (parts[1] === 'restart') {
      run.restarting = true;
      for (const c of run.streams) c.close();
      run.streams.clear();
      return Response.json({ ok: true });
    }
    if (parts[1] === 'recover') {
      run.restarting = false;
      return Response.json({ ok: true });
    }
    return Response.json({ refused: run.refused });
  }
  if (request.method === 'POST' && url.pathname === '/run') {
    const { runId } = (await request.json()) as { runId: string };
    return silentStream(state(runId));
  }
  if (parts[0] === 'runs' && parts[1]) {
    const run = state(parts[1]);
    if (parts[2] === 'cancel') return Response.json({ ok: true });
    if (run.restarting) {
      run.refused++;
      return Response.json({ error: { code: 'restarting', message: 'quiet runner restarting' } }, { status: 503 });
    }
    return silentStream(run);
  }
  return Response.json({ error: { code: 'not_found', message: 'quiet runner' } }, { status: 404 });
}
