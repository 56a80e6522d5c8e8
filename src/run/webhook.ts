import { isObject, MAX_TOOL_RESULT_BYTES, ownRecord, parseToolOutcome, parseTrustedJson, type ToolOutcome } from '../protocol/index.ts';

/** SPEC: network errors and 5xx are retried, 3 tries in all, with the same Idempotency-Key. */
export const WEBHOOK_TRIES = 3;
/** Waits before the 2nd and 3rd try. */
export const WEBHOOK_BACKOFF_MS = [250, 1_000] as const;
/** A tool's result becomes one chunk, and a chunk is at most 1 MiB. */
export const MAX_WEBHOOK_RESPONSE_BYTES = MAX_TOOL_RESULT_BYTES;

export const SIGNATURE_HEADER = 'x-relay-signature';

export interface WebhookCall {
  url: string;
  /** `TOOL_WEBHOOK_SECRET`. */
  secret: string;
  /** `{runId, threadId, toolCallId, name, input}`. */
  body: { runId: string; threadId: string; toolCallId: string; name: string; input: unknown };
  /** The whole call, retries and their waits included (`TOOL_TIMEOUT_SECONDS`). */
  timeoutMs: number;
  /** Tries left: `WEBHOOK_TRIES` less those an earlier instance of the object made before it restarted. */
  tries?: number;
  /** Called before each request is sent, so a restart knows one may have reached the webhook. */
  onAttempt?: () => void;
  fetcher?: typeof fetch;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
}

const encoder = new TextEncoder();

function hex(bytes: ArrayBuffer): string {
  return [...new Uint8Array(bytes)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * `X-Relay-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`,
 * the scheme Stripe made familiar: the timestamp lets a receiver refuse a
 * replayed request, the HMAC that the body came from the relay.
 */
export async function signWebhook(secret: string, body: string, unixSeconds: number): Promise<string> {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = await crypto.subtle.sign('HMAC', key, encoder.encode(`${unixSeconds}.${body}`));
  return `t=${unixSeconds},v1=${hex(mac)}`;
}

class RetryableError extends Error {}

/** Reads at most `max` bytes of a body; more is an error rather than a megabyte in memory. */
async function readBounded(response: Response, max: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return '';
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      throw new Error(`the webhook's answer is over ${max} bytes`);
    }
    parts.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.byteLength;
  }
  return new TextDecoder().decode(all);
}

async function attempt(call: WebhookCall, text: string, signal: AbortSignal): Promise<ToolOutcome> {
  const fetcher = call.fetcher ?? fetch;
  const now = call.now ?? Date.now;
  const signature = await signWebhook(call.secret, text, Math.floor(now() / 1000));
  call.onAttempt?.();
  let response: Response;
  try {
    response = await fetcher(call.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', [SIGNATURE_HEADER]: signature, 'idempotency-key': call.body.toolCallId },
      body: text,
      // A redirect could lead anywhere, past the origin allowlist: it is an answer, not a hop.
      redirect: 'manual',
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new RetryableError(`the webhook could not be reached (${error instanceof Error ? error.message : String(error)})`);
  }
  if (response.status >= 500) {
    await response.body?.cancel().catch(() => undefined);
    throw new RetryableError(`the webhook answered ${response.status}`);
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    return { error: `the webhook answered a redirect (${response.status}); webhook tools are not redirected` };
  }
  const body = await readBounded(response, MAX_WEBHOOK_RESPONSE_BYTES);
  let parsed: unknown;
  try {
    parsed = parseTrustedJson(body, 'webhook answer');
  } catch {
    return { error: `the webhook answered ${response.status} with a body that is not JSON` };
  }
  if (!response.ok) {
    const detail = isObject(parsed) && Object.hasOwn(parsed, 'error') ? parseToolOutcome({ error: parsed.error }, 'answer') : null;
    return { error: `the webhook answered ${response.status}${detail && 'error' in detail ? `: ${detail.error}` : ''}` };
  }
  try {
    return parseToolOutcome(ownRecord(parsed, 'answer'), 'answer');
  } catch {
    return { error: 'the webhook answered 2xx without {output} or {error}' };
  }
}

/**
 * Executes one webhook tool call as SPEC says: a signed `POST`, the tool call
 * id as `Idempotency-Key` on every try, network errors and 5xx retried.
 * Every ending is an outcome for the harness (`{output}` or `{error}`), never
 * a throw: a tool that fails is a failed tool call, and the run goes on.
 */
export async function callWebhook(call: WebhookCall): Promise<ToolOutcome> {
  const sleep = call.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const text = JSON.stringify(call.body);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new Error('timeout')), call.timeoutMs);
  const seconds = Math.round(call.timeoutMs / 1000);
  try {
    let last = '';
    const tries = Math.min(call.tries ?? WEBHOOK_TRIES, WEBHOOK_TRIES);
    if (tries <= 0) return { error: `the webhook was called ${WEBHOOK_TRIES} times (before the relay restarted) without an answer; the tool call failed` };
    for (let i = 0; i < tries; i++) {
      if (i > 0) await Promise.race([sleep(WEBHOOK_BACKOFF_MS[i - 1]!), new Promise((resolve) => controller.signal.addEventListener('abort', resolve, { once: true }))]);
      if (controller.signal.aborted) break;
      try {
        return await attempt(call, text, controller.signal);
      } catch (error) {
        if (controller.signal.aborted) break;
        if (!(error instanceof RetryableError)) return { error: `the webhook call failed: ${error instanceof Error ? error.message : String(error)}` };
        last = error.message;
      }
    }
    if (controller.signal.aborted) return { error: `timeout: the webhook did not answer within ${seconds} s (TOOL_TIMEOUT_SECONDS)` };
    return { error: `${last}, ${tries === 1 ? 'once' : `${tries} times`}; the tool call failed` };
  } finally {
    clearTimeout(timer);
  }
}
