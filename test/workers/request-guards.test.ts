import { env, listDurableObjectIds } from 'cloudflare:test';
import { exports } from 'cloudflare:workers';
import { describe, expect, it } from 'vitest';
import { api, BASE, createRun } from './helpers.ts';

/**
 * The browser-facing boundary with auth off (this project's API_TOKEN is
 * unset, as under `npm start`): what a hostile page or a DNS-rebound name
 * can reach on a developer's machine. Nothing, and nothing is stored.
 */

const OWN_ORIGIN = new URL(BASE).origin;
const FOREIGN_ORIGINS = ['http://evil.test', 'http://127.0.0.1:9999', 'http://localhost:8787', 'null'];

async function expectError(res: Response, status: number, code: string) {
  expect(res.status).toBe(status);
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(20);
  return body;
}

async function storedObjects(): Promise<Set<string>> {
  const ids = [...(await listDurableObjectIds(env.RUNS)), ...(await listDurableObjectIds(env.THREADS))];
  return new Set(ids.map((id) => id.toString()));
}

/** Runs `act`, then checks that no run or thread object was created by it. */
async function storesNothing(act: () => Promise<void>): Promise<void> {
  const before = await storedObjects();
  await act();
  expect([...(await storedObjects())].filter((id) => !before.has(id))).toEqual([]);
}

const prompt = JSON.stringify({ prompt: 'hello' });

describe('DNS rebinding: with auth off only loopback hosts are served', () => {
  it.each(['http://evil.test', 'http://evil.test:8787', 'http://127.0.0.1.evil.test', 'http://localhost.evil.test'])('answers %s with 403 forbidden_host over HTTP', async (base) => {
    const { json } = await createRun();
    await storesNothing(async () => {
      await expectError(await exports.default.fetch(`${base}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: prompt }), 403, 'forbidden_host');
    });
    await expectError(await exports.default.fetch(`${base}/runs/${json.runId}`), 403, 'forbidden_host');
    await expectError(await exports.default.fetch(`${base}/runs/${json.runId}/events`), 403, 'forbidden_host');
    await expectError(await exports.default.fetch(`${base}/runs/${json.runId}/cancel`, { method: 'POST' }), 403, 'forbidden_host');
    expect(((await (await api(`/runs/${json.runId}`)).json()) as { status: string }).status).toBe('running');
  });

  it('refuses a WebSocket whose Host and Origin are the same foreign name (the rebinding case)', async () => {
    const { json } = await createRun();
    const res = await exports.default.fetch(`http://evil.test/runs/${json.runId}/ws`, { headers: { upgrade: 'websocket', origin: 'http://evil.test' } });
    expect(res.webSocket).toBeNull();
    await expectError(res, 403, 'forbidden_host');
  });

  it.each(['http://localhost:8787', 'http://127.0.0.1', 'http://[::1]:9000'])('serves the loopback host %s, WebSocket included', async (base) => {
    const created = await exports.default.fetch(`${base}/runs`, { method: 'POST', headers: { 'content-type': 'application/json', origin: base }, body: prompt });
    expect(created.status).toBe(202);
    const { runId } = (await created.json()) as { runId: string };
    const ws = await exports.default.fetch(`${base}/runs/${runId}/ws`, { headers: { upgrade: 'websocket', origin: base } });
    expect(ws.status).toBe(101);
    ws.webSocket!.accept();
    ws.webSocket!.close(1000);
  });
});

describe('cross-origin requests', () => {
  it.each(FOREIGN_ORIGINS)('refuses POST /runs from Origin %s with 403 forbidden_origin, JSON or not, and stores nothing', async (origin) => {
    await storesNothing(async () => {
      await expectError(await api('/runs', { method: 'POST', headers: { 'content-type': 'application/json', origin }, body: prompt }), 403, 'forbidden_origin');
      // What a `mode: 'no-cors'` fetch sends: a CORS-simple type, or none.
      await expectError(await api('/runs', { method: 'POST', headers: { 'content-type': 'text/plain;charset=UTF-8', origin }, body: prompt }), 403, 'forbidden_origin');
      await expectError(await api('/runs', { method: 'POST', headers: { origin }, body: new TextEncoder().encode(prompt) }), 403, 'forbidden_origin');
    });
  });

  it.each(FOREIGN_ORIGINS)('refuses a cancel and a WebSocket from Origin %s, and the run goes on', async (origin) => {
    const { json } = await createRun();
    await expectError(await api(`/runs/${json.runId}/cancel`, { method: 'POST', headers: { origin } }), 403, 'forbidden_origin');
    const ws = await api(`/runs/${json.runId}/ws`, { headers: { upgrade: 'websocket', origin } });
    expect(ws.webSocket).toBeNull();
    await expectError(ws, 403, 'forbidden_origin');
    expect(((await (await api(`/runs/${json.runId}`)).json()) as { status: string }).status).toBe('running');
  });

  it('refuses a body with no Content-Type, or a simple one, even with no Origin (415), and stores nothing', async () => {
    await storesNothing(async () => {
      await expectError(await api('/runs', { method: 'POST', body: new TextEncoder().encode(prompt) }), 415, 'unsupported_media_type');
      await expectError(await api('/runs', { method: 'POST', headers: { 'content-type': 'text/plain' }, body: prompt }), 415, 'unsupported_media_type');
      await expectError(await api('/runs', { method: 'POST', headers: { 'content-type': 'multipart/form-data; boundary=x' }, body: prompt }), 415, 'unsupported_media_type');
    });
  });

  it("lets the relay's own page start, tail and cancel a run", async () => {
    const created = await api('/runs', { method: 'POST', headers: { 'content-type': 'application/json', origin: OWN_ORIGIN }, body: prompt });
    expect(created.status).toBe(202);
    const { runId } = (await created.json()) as { runId: string };
    const ws = await api(`/runs/${runId}/ws`, { headers: { upgrade: 'websocket', origin: OWN_ORIGIN } });
    expect(ws.status).toBe(101);
    ws.webSocket!.accept();
    const cancelled = await api(`/runs/${runId}/cancel`, { method: 'POST', headers: { origin: OWN_ORIGIN } });
    expect(((await cancelled.json()) as { status: string }).status).toBe('aborted');
    ws.webSocket!.close(1000);
  });

  it('lets a tool without an Origin (curl, a backend) in, as before', async () => {
    const { res, json } = await createRun();
    expect(res.status).toBe(202);
    expect((await api(`/runs/${json.runId}/cancel`, { method: 'POST' })).status).toBe(200);
  });
});

describe('preflight: a harness that cannot run is refused before anything is stored', () => {
  it.each([
    { harness: 'claude-code', names: /claude/ },
    { harness: 'codex', names: /codex/ },
    { harness: 'chat', names: /ANTHROPIC_API_KEY/ },
  ])('answers $harness with 400 harness_unavailable naming what is missing', async ({ harness, names }) => {
    await storesNothing(async () => {
      const { error } = await expectError(await api('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', harness, threadId: `t-${harness}` }) }), 400, 'harness_unavailable');
      expect(error.message).toMatch(names);
    });
    await expectError(await api(`/threads/t-${harness}`), 404, 'thread_not_found');
  });

  it('names the chat provider the model picks', async () => {
    const { error } = await expectError(await api('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', harness: 'chat', model: 'gpt-5.1' }) }), 400, 'harness_unavailable');
    expect(error.message).toContain('OPENAI_API_KEY');
  });

  it.each([
    { harness: 'demo', bad: { chunks: 'many' }, unknown: { speed: 1 } },
    { harness: 'claude-code', bad: { maxTurns: '1; touch /tmp/x; #' }, unknown: { cwd: '/' } },
    { harness: 'codex', bad: { sandboxMode: 'yolo' }, unknown: { config: { x: 1 } } },
    { harness: 'chat', bad: { provider: 'gemini' }, unknown: { evil: 1 } },
  ])('answers a bad and an unknown $harness option with 400 invalid_harness_options naming it, and stores no run and no thread', async ({ harness, bad, unknown }) => {
    for (const [label, harnessOptions] of [['bad', bad], ['unknown', unknown]] as const) {
      const threadId = `t-opt-${harness}-${label}`;
      await storesNothing(async () => {
        const body = JSON.stringify({ prompt: 'hi', harness, threadId, harnessOptions });
        const { error } = await expectError(await api('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body }), 400, 'invalid_harness_options');
        expect(error.message).toContain(`harnessOptions.${Object.keys(harnessOptions)[0]}`);
      });
      await expectError(await api(`/threads/${threadId}`), 404, 'thread_not_found');
    }
  });

  it('checks options before availability: a bad option is invalid_harness_options, and stores nothing', async () => {
    await storesNothing(async () => {
      await expectError(await api('/runs', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'hi', harness: 'chat', harnessOptions: { evil: 1 } }) }), 400, 'invalid_harness_options');
    });
  });
});
