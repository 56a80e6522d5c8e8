import { fileURLToPath } from 'node:url';
import { runnerHealth } from '../../container/src/availability.ts';
import { quietRunner } from './quiet-runner.ts';

/** The real runner's health for a machine with the `claude` CLI double on PATH and an Anthropic key. */
const FIXTURE_BIN = fileURLToPath(new URL('../../container/test/fixtures/', import.meta.url));
const HEALTH = runnerHealth({ PATH: FIXTURE_BIN, ANTHROPIC_API_KEY: 'sk-ant-recording-runner-key' });

/**
 * The quiet runner, plus a transcript of every request the relay made to it
 * (method, URL, headers, body) at `GET /control/recorded`, so a test can
 * assert what never leaves the Worker (a harness secret, a token).
 */
const recorded: string[] = [];

export async function recordingRunner(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === '/control/recorded') return Response.json({ recorded });
  if (url.pathname === '/health') return Response.json(HEALTH);
  const body = request.body ? await request.clone().text() : '';
  const headers: string[] = [];
  request.headers.forEach((value, name) => void headers.push(`${name}: ${value}`));
  recorded.push(`${request.method} ${request.url}\n${headers.join('\n')}\n\n${body}`);
  return quietRunner(request);
}
