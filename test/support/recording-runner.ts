import { quietRunner } from './quiet-runner.ts';

/**
 * The quiet runner, plus a transcript of every request the relay made to it
 * (method, URL, headers, body) at `GET /control/recorded`, so a test can
 * assert what never leaves the Worker (a harness secret, a token).
 */
const recorded: string[] = [];

export async function recordingRunner(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.pathname === '/control/recorded') return Response.json({ recorded });
  const body = request.body ? await request.clone().text() : '';
  const headers: string[] = [];
  request.headers.forEach((value, name) => void headers.push(`${name}: ${value}`));
  recorded.push(`${request.method} ${request.url}\n${headers.join('\n')}\n\n${body}`);
  return quietRunner(request);
}
