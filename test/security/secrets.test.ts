import { createExecutionContext, runInDurableObject, waitOnExecutionContext } from 'cloudflare:test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { app } from '../../src/http/app.ts';
import { attachSubprotocols } from '../../src/protocol/index.ts';
import { API_TOKEN, api, bearer, createRun, feed, finished, HARNESS_SECRET, openTail, relayEnv, stubOf, texts } from './helpers.ts';

const MARKER = 'distinctive-prompt-marker-5d1f';

/** Everything the run object keeps: every SQLite table it may read, and the key-value API. */
function dumpStorage(runId: string): Promise<{ tables: string[]; text: string }> {
  return runInDurableObject(stubOf(null, runId), async (_object, state) => {
    const tables: string[] = [];
    const parts: string[] = [];
    for (const { name } of state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table'").toArray()) {
      try {
        parts.push(JSON.stringify(state.storage.sql.exec(`SELECT * FROM "${name.replace(/"/g, '""')}"`).toArray()));
        tables.push(name);
      } catch {
        // workerd's own tables (_cf_KV, ...) refuse SQL reads; the KV API below reads _cf_KV.
      }
    }
    parts.push(JSON.stringify([...state.storage.kv.list()]));
    parts.push(JSON.stringify([...(await state.storage.list()).entries()]));
    return { tables, text: parts.join('\n') };
  });
}

/** A whole answer as text: status, headers and body. */
async function answer(res: Response): Promise<string> {
  return `${res.status}\n${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n\n${res.webSocket ? '' : new TextDecoder().decode(await res.arrayBuffer())}`;
}

let logged: string[] = [];

beforeEach(() => {
  logged = [];
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    vi.spyOn(console, method).mockImplementation((...args: unknown[]) => void logged.push(args.map((a) => (a instanceof Error ? `${a.message}\n${a.stack}` : String(a))).join(' ')));
  }
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('secrets', () => {
  it('never reach the run’s storage, an API answer or the runner request', async () => {
    const created = await createRun({
      body: {
        messages: [{ role: 'user', content: `${MARKER}: use your API key` }],
        threadId: 'secret-scan',
        model: 'demo-model',
        harnessOptions: { chunks: 3, delayMs: 0 },
      },
    });
    const { runId, attachToken } = created;
    const answers = [JSON.stringify(created.body)];
    const tail = await openTail(`/runs/${runId}/ws`, { 'sec-websocket-protocol': attachSubprotocols(attachToken).join(', ') });
    await feed(null, runId, [...texts(0, 3), finished(runId)]);
    await tail.closed;
    answers.push(JSON.stringify(tail.frames));
    for (const res of [
      await api(`/runs/${runId}`, { headers: bearer() }),
      await api(`/runs/${runId}?token=${attachToken}`),
      await api(`/runs/${runId}/events`, { headers: bearer() }),
      await api(`/runs/${runId}/events?token=${attachToken}`, { headers: { accept: 'text/event-stream' } }),
      await api(`/runs/${runId}/attach-token`, { method: 'POST', headers: bearer() }),
      await api(`/runs/${runId}/cancel`, { method: 'POST', headers: bearer() }),
      await api(`/runs/${runId}`),
      await api(`/runs/${runId}`, { headers: { authorization: 'Bearer wrong' } }),
      await api(`/runs/${runId}?token=${attachToken}x`),
      await api('/health'),
    ]) {
      answers.push(await answer(res));
    }

    const storage = await dumpStorage(runId);
    expect(storage.tables).toEqual(expect.arrayContaining(['run', 'events']));
    expect(storage.text).toContain(MARKER); // the scan sees what the run holds
    const { recorded } = (await (await fetch('http://quiet-runner.test/control/recorded')).json()) as { recorded: string[] };
    const toRunner = recorded.filter((request) => request.includes(runId));
    expect(toRunner.some((request) => request.startsWith('POST http://quiet-runner.test/run') && request.includes(MARKER))).toBe(true);

    for (const secret of [HARNESS_SECRET, API_TOKEN]) {
      expect(storage.text).not.toContain(secret);
      for (const text of [...answers, ...toRunner]) expect(text).not.toContain(secret);
    }
    expect(storage.text).not.toContain(attachToken);
    expect(toRunner.join('\n')).not.toContain(attachToken);
  });

  it('never reach a log line, nor do tokens: a failing request logs its path without the query', async () => {
    const { runId, attachToken } = await createRun();
    await api(`/runs/${runId}/ws?token=${attachToken}`, { headers: { upgrade: 'websocket', origin: 'https://evil.example' } });
    await api(`/runs/${runId}?token=${attachToken}.forged`);
    // A misconfigured deployment fails inside the app, and onError logs the request.
    const ctx = createExecutionContext();
    const res = await app.fetch(
      new Request(`http://relay.test/runs/${runId}?token=${attachToken}`, { headers: { authorization: `Bearer ${API_TOKEN}` } }),
      { ...relayEnv, ALLOWED_ORIGINS: 'https://*.example' },
      ctx,
    );
    await waitOnExecutionContext(ctx);
    expect(res.status).toBe(500);
    expect(logged.join('\n')).toContain(`/runs/${runId}`);
    for (const secret of [HARNESS_SECRET, API_TOKEN, attachToken]) expect(logged.join('\n')).not.toContain(secret);
  });
});
