import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { callWebhook, signWebhook, WEBHOOK_TRIES, type WebhookCall } from '../../src/run/webhook.ts';

const SECRET = 'whsec-unit-test';
const BODY = { runId: 'run_1', threadId: 'thread_1', toolCallId: 'call_1', name: 'lookup', input: { q: 'x' } };

interface Seen {
  url: string;
  init: RequestInit;
}

/** A webhook double: each request answers the next scripted response (or throws), and is recorded. */
function scripted(answers: (Response | Error | 'hang')[]) {
  const seen: Seen[] = [];
  const fetcher = (async (url: string, init: RequestInit) => {
    seen.push({ url, init });
    const next = answers.shift() ?? new Response('{}', { status: 500 });
    if (next === 'hang') {
      return new Promise<Response>((_, reject) => init.signal?.addEventListener('abort', () => reject(init.signal?.reason)));
    }
    if (next instanceof Error) throw next;
    return next;
  }) as unknown as typeof fetch;
  return { fetcher, seen };
}

function call(fetcher: typeof fetch, extra: Partial<WebhookCall> = {}): WebhookCall {
  return { url: 'https://hooks.example/lookup', secret: SECRET, body: BODY, timeoutMs: 10_000, fetcher, sleep: async () => {}, ...extra };
}

function header(seen: Seen, name: string): string | undefined {
  return new Headers(seen.init.headers).get(name) ?? undefined;
}

describe('webhook tool calls', () => {
  it('signs t=<seconds>,v1=HMAC-SHA256(secret, "<t>.<body>") as a receiver recomputes it', async () => {
    const { fetcher, seen } = scripted([Response.json({ output: { ok: 1 } })]);
    const outcome = await callWebhook(call(fetcher, { now: () => 1_764_000_000_123 }));
    expect(outcome).toEqual({ output: { ok: 1 } });
    const signature = header(seen[0]!, 'x-relay-signature')!;
    const body = String(seen[0]!.init.body);
    expect(JSON.parse(body)).toEqual(BODY);
    const expected = createHmac('sha256', SECRET).update(`1764000000.${body}`).digest('hex');
    expect(signature).toBe(`t=1764000000,v1=${expected}`);
    expect(await signWebhook(SECRET, body, 1764000000)).toBe(signature);
    expect(header(seen[0]!, 'idempotency-key')).toBe('call_1');
    expect(seen[0]!.init.redirect).toBe('manual');
  });

  it('retries network errors and 5xx with the same Idempotency-Key, 3 tries in all', async () => {
    const { fetcher, seen } = scripted([new Response('no', { status: 500 }), new TypeError('connection reset'), Response.json({ output: 'third' })]);
    let attempts = 0;
    expect(await callWebhook(call(fetcher, { onAttempt: () => attempts++ }))).toEqual({ output: 'third' });
    expect(seen.map((s) => header(s, 'idempotency-key'))).toEqual(['call_1', 'call_1', 'call_1']);
    expect(attempts).toBe(3);
  });

  it('gives up after 3 failed tries with an error outcome, not a throw', async () => {
    const { fetcher, seen } = scripted([new Response('', { status: 502 }), new Response('', { status: 503 }), new Response('', { status: 500 }), Response.json({ output: 'never' })]);
    const outcome = await callWebhook(call(fetcher));
    expect(seen).toHaveLength(WEBHOOK_TRIES);
    expect(outcome).toEqual({ error: expect.stringContaining('answered 500') });
  });

  it('counts the tries an earlier instance made: 3 in all across restarts, none once they are used', async () => {
    const one = scripted([new Response('', { status: 500 }), Response.json({ output: 'never' })]);
    expect(await callWebhook(call(one.fetcher, { tries: 1 }))).toEqual({ error: expect.stringContaining('answered 500, once') });
    expect(one.seen).toHaveLength(1);
    const none = scripted([Response.json({ output: 'never' })]);
    expect(await callWebhook(call(none.fetcher, { tries: 0 }))).toEqual({ error: expect.stringContaining('before the relay restarted') });
    expect(none.seen).toHaveLength(0);
  });

  it('does not retry a 4xx, and passes its error on', async () => {
    const { fetcher, seen } = scripted([Response.json({ error: 'no such city' }, { status: 422 })]);
    expect(await callWebhook(call(fetcher))).toEqual({ error: 'the webhook answered 422: no such city' });
    expect(seen).toHaveLength(1);
  });

  it('takes {error} from a 2xx as the tool failing', async () => {
    const { fetcher } = scripted([Response.json({ error: { message: 'quota used up' } })]);
    expect(await callWebhook(call(fetcher))).toEqual({ error: 'quota used up' });
  });

  it('never follows a redirect (it could lead past the origin allowlist)', async () => {
    const { fetcher, seen } = scripted([new Response(null, { status: 307, headers: { location: 'http://169.254.169.254/' } })]);
    expect(await callWebhook(call(fetcher))).toEqual({ error: expect.stringContaining('redirect') });
    expect(seen).toHaveLength(1);
  });

  it('ends a webhook that does not answer within the timeout with a timeout error', async () => {
    const { fetcher } = scripted(['hang']);
    expect(await callWebhook(call(fetcher, { timeoutMs: 50 }))).toEqual({ error: expect.stringMatching(/^timeout: .*TOOL_TIMEOUT_SECONDS/) });
  });

  it('refuses an answer that is not JSON or has neither output nor error', async () => {
    expect(await callWebhook(call(scripted([new Response('<html>')]).fetcher))).toEqual({ error: expect.stringContaining('not JSON') });
    expect(await callWebhook(call(scripted([Response.json({ result: 1 })]).fetcher))).toEqual({ error: expect.stringContaining('without {output} or {error}') });
  });

  it('refuses an answer too large to become one chunk', async () => {
    const huge = JSON.stringify({ output: 'x'.repeat(600 * 1024) });
    expect(await callWebhook(call(scripted([new Response(huge)]).fetcher))).toEqual({ error: expect.stringContaining('over') });
  });
});
