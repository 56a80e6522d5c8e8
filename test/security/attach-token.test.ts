import { env, listDurableObjectIds } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../../src/config.ts';
import { attachTokenKey, mintAttachToken, signAttachToken, verifyAttachToken } from '../../src/http/attach-token.ts';
import { offeredSubprotocols, presentedAttachToken } from '../../src/http/subprotocol.ts';
import { attachSubprotocols, isStatusFrame, type AttachTokenPayload } from '../../src/protocol/index.ts';
import { api, bearer, createRun, expectError, feed, finished, openTail, relayEnv, status, texts } from './helpers.ts';

const key = () => attachTokenKey(readConfig(relayEnv));

function payloadOf(token: string): AttachTokenPayload {
  const body = token.split('.')[0]!.replace(/-/g, '+').replace(/_/g, '/');
  return JSON.parse(atob(body)) as AttachTokenPayload;
}

async function expectInvalidToken(res: Response, reason: RegExp): Promise<void> {
  expect(res.webSocket).toBeNull();
  expect(res.headers.get('www-authenticate')).toBe('Bearer realm="harness-relay", error="invalid_token"');
  const body = await expectError(res, 401, 'unauthorized');
  expect(body.error.message).toMatch(reason);
}

/** Every way a token reaches the relay; each must refuse the same bad token. */
function readsWith(runId: string, token: string): Array<Promise<Response>> {
  const q = `token=${encodeURIComponent(token)}`;
  return [
    api(`/runs/${runId}?${q}`),
    api(`/runs/${runId}/events?${q}`, { headers: { accept: 'text/event-stream' } }),
    api(`/runs/${runId}/events?${q}`),
    api(`/runs/${runId}/ws?${q}`, { headers: { upgrade: 'websocket' } }),
    api(`/runs/${runId}/ws`, { headers: { upgrade: 'websocket', 'sec-websocket-protocol': attachSubprotocols(token).join(', ') } }),
  ];
}

describe('attach tokens', () => {
  it('come with POST /runs: base64url(JSON {v, run, tenant, exp, respond}) + "." + base64url(HMAC-SHA256), valid for an hour, and may answer tool calls', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { runId, attachToken } = await createRun();
    expect(attachToken).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
    const payload = payloadOf(attachToken);
    expect(payload).toEqual({ v: 1, run: runId, tenant: null, exp: expect.any(Number), respond: true });
    expect(payload.exp - before).toBeGreaterThanOrEqual(3599);
    expect(payload.exp - before).toBeLessThanOrEqual(3601);
  });

  it('read the record with ?token=', async () => {
    const { runId, attachToken } = await createRun();
    const res = await api(`/runs/${runId}?token=${attachToken}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ runId, status: 'running' });
  });

  it('tail over SSE and NDJSON with ?token=', async () => {
    const { runId, attachToken } = await createRun();
    await feed(null, runId, [...texts(0, 2), finished(runId)]);
    const sse = await api(`/runs/${runId}/events?token=${attachToken}`, { headers: { accept: 'text/event-stream' } });
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await sse.text();
    expect(text).toContain('id: 2\n');
    expect(text).toContain('event: status\n');
    const ndjson = await api(`/runs/${runId}/events?token=${attachToken}`);
    expect(new TextDecoder().decode(await ndjson.arrayBuffer()).trim().split('\n')).toHaveLength(4);
  });

  it('tail over WebSocket with ?token=', async () => {
    const { runId, attachToken } = await createRun();
    const tail = await openTail(`/runs/${runId}/ws?token=${attachToken}`);
    await feed(null, runId, [...texts(0, 2), finished(runId)]);
    expect((await tail.closed).code).toBe(1000);
    expect(tail.seqs()).toEqual([0, 1, 2]);
  });

  it('tail over WebSocket in Sec-WebSocket-Protocol, and the 101 echoes harness-relay (never the token)', async () => {
    const { runId, attachToken } = await createRun();
    const res = await api(`/runs/${runId}/ws`, { headers: { upgrade: 'websocket', 'sec-websocket-protocol': attachSubprotocols(attachToken).join(', ') } });
    expect(res.status).toBe(101);
    expect(res.headers.get('sec-websocket-protocol')).toBe('harness-relay');
    const ws = res.webSocket!;
    const frames: string[] = [];
    const closed = new Promise<number>((resolve) => ws.addEventListener('close', (event) => resolve(event.code)));
    ws.addEventListener('message', (event) => {
      frames.push(String(event.data));
    });
    ws.accept();
    await feed(null, runId, [...texts(0, 1), finished(runId)]);
    expect(await closed).toBe(1000);
    expect(frames).toHaveLength(3);
  });

  it('are echoed no protocol when the client offered none', async () => {
    const { runId, attachToken } = await createRun();
    const res = await api(`/runs/${runId}/ws?token=${attachToken}`, { headers: { upgrade: 'websocket' } });
    expect(res.status).toBe(101);
    expect(res.headers.get('sec-websocket-protocol')).toBeNull();
    res.webSocket!.accept();
  });

  it('are refreshed by POST /runs/:runId/attach-token with the API token', async () => {
    const { runId } = await createRun();
    const res = await api(`/runs/${runId}/attach-token`, { method: 'POST', headers: bearer() });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { attachToken: string; expiresAt: number };
    expect(Object.keys(body).sort()).toEqual(['attachToken', 'expiresAt']);
    expect(body.expiresAt).toBe(payloadOf(body.attachToken).exp * 1000);
    expect((await api(`/runs/${runId}?token=${body.attachToken}`)).status).toBe(200);
  });

  it('cannot mint attach tokens, create runs or cancel — not even their own run', async () => {
    const { runId, attachToken } = await createRun();
    const before = (await listDurableObjectIds(env.RUNS)).length;
    const q = `?token=${attachToken}`;
    const protocol = { 'sec-websocket-protocol': attachSubprotocols(attachToken).join(', ') };
    const refused = [
      await api(`/runs/${runId}/cancel${q}`, { method: 'POST' }),
      await api(`/runs/${runId}/cancel`, { method: 'POST', headers: protocol }),
      await api(`/runs/${runId}/attach-token${q}`, { method: 'POST' }),
      await api(`/runs${q}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"prompt":"hi"}' }),
      await api(`/threads/${runId}${q}`),
    ];
    for (const res of refused) {
      expect(res.headers.get('www-authenticate')).toBe('Bearer realm="harness-relay"');
      await expectError(res, 401, 'unauthorized');
    }
    expect(await status(null, runId)).toBe('running');
    expect((await listDurableObjectIds(env.RUNS)).length).toBe(before);
  });

  it('refuse a forged MAC, an altered payload, another key’s signature and garbage with 401 invalid_token', async () => {
    const { runId, attachToken } = await createRun();
    const [body, mac] = attachToken.split('.') as [string, string];
    const flipped = `${body}.${mac[0] === 'A' ? 'B' : 'A'}${mac.slice(1)}`;
    const altered = `${btoa(JSON.stringify({ ...payloadOf(attachToken), exp: payloadOf(attachToken).exp + 86_400 })).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')}.${mac}`;
    const otherKey = await attachTokenKey({ attachTokenSecret: 'some other deployment', apiToken: undefined });
    const foreign = (await mintAttachToken(otherKey, { run: runId, tenant: null }, Date.now(), 3_600_000)).attachToken;
    for (const token of [flipped, altered, foreign, `${body}.`, body, `${attachToken}.x`, 'x', '', 'a'.repeat(5000)]) {
      for (const res of await Promise.all(readsWith(runId, token))) await expectInvalidToken(res, /not valid/);
    }
  });

  it('refuse an expired token with 401 invalid_token, saying it expired', async () => {
    const { runId } = await createRun();
    const expired = await signAttachToken(await key(), { v: 1, run: runId, tenant: null, exp: Math.floor(Date.now() / 1000) - 1 });
    for (const res of await Promise.all(readsWith(runId, expired))) await expectInvalidToken(res, /expired/);
    const check = await verifyAttachToken(await key(), expired, Date.now());
    expect(check).toEqual({ ok: false, reason: 'expired' });
  });

  it('let a wrong API token win over a good attach token (401)', async () => {
    const { runId, attachToken } = await createRun();
    const res = await api(`/runs/${runId}?token=${attachToken}`, { headers: { authorization: 'Bearer wrong' } });
    await expectError(res, 401, 'unauthorized');
  });

  it('open a socket that offers only bearer.<token>, echoing nothing (a strict client must also offer harness-relay)', async () => {
    const { runId, attachToken } = await createRun();
    const res = await api(`/runs/${runId}/ws`, { headers: { upgrade: 'websocket', 'sec-websocket-protocol': `bearer.${attachToken}` } });
    expect(res.status).toBe(101);
    expect(res.headers.get('sec-websocket-protocol')).toBeNull();
    res.webSocket!.accept();
  });

  it('give the record as the API does, with a terminal status once finished', async () => {
    const { runId, attachToken } = await createRun();
    await feed(null, runId, [finished(runId)]);
    const tail = await openTail(`/runs/${runId}/ws?token=${attachToken}`);
    await tail.closed;
    const last = tail.frames.at(-1)!;
    expect(isStatusFrame(last) && last.record.status).toBe('completed');
  });
});

describe('where a token is presented', () => {
  it('takes bearer.<token> from Sec-WebSocket-Protocol before ?token=', () => {
    const request = new Request('https://relay.example/runs/x/ws?token=from-query', { headers: { 'sec-websocket-protocol': attachSubprotocols('a.b').join(', ') } });
    expect(offeredSubprotocols(request)).toEqual(['harness-relay', 'bearer.a.b']);
    expect(presentedAttachToken(request)).toBe('a.b');
    expect(presentedAttachToken(new Request('https://relay.example/runs/x?token=q.t'))).toBe('q.t');
    expect(presentedAttachToken(new Request('https://relay.example/runs/x'))).toBeNull();
  });
});
