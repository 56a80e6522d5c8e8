import { isHarnessRunErrorCode, type HarnessName, type HarnessRunErrorCode } from '../../../src/protocol/index.ts';

/**
 * A harness's `RUN_ERROR` mapped to SPEC's closed list of codes, keeping the
 * provider's or CLI's own message.
 *
 * The provider adapters put the SDK error's HTTP status in `code` (or the
 * string "undefined" when the error came mid-stream with no status) and its
 * parsed body in `rawEvent`: Anthropic's `{type: 'error', error: {type,
 * message}}`, OpenAI's `{message, type, code}`. The CLIs only say it in words
 * ("API Error: 429 …", "unexpected status 401 Unauthorized: …").
 */
export interface HarnessRunError {
  code: HarnessRunErrorCode;
  message: string;
}

type Fields = Record<string, unknown>;

function record(value: unknown): Fields | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** Provider error types (Anthropic `error.type`, OpenAI `type`/`code`) by SPEC code. */
const ERROR_TYPES: ReadonlyArray<readonly [HarnessRunErrorCode, readonly string[]]> = [
  ['provider_auth', ['authentication_error', 'permission_error', 'invalid_api_key']],
  ['rate_limited', ['rate_limit_error', 'rate_limit_exceeded', 'insufficient_quota']],
  ['provider_overloaded', ['overloaded_error']],
];

function byStatus(status: number): HarnessRunErrorCode | undefined {
  if (status === 401 || status === 403) return 'provider_auth';
  if (status === 429) return 'rate_limited';
  if (status === 529 || status === 503) return 'provider_overloaded';
  return undefined;
}

function byType(type: string | undefined): HarnessRunErrorCode | undefined {
  if (type === undefined) return undefined;
  return ERROR_TYPES.find(([, types]) => types.includes(type))?.[0];
}

/** What a CLI's message says, in the words Claude Code and Codex use. */
function byWords(message: string): HarnessRunErrorCode | undefined {
  if (/\b(401|403)\b|invalid (x-)?api[ -]key|authentication_error|unauthorized/i.test(message)) return 'provider_auth';
  if (/\b429\b|rate[ _]limit/i.test(message)) return 'rate_limited';
  if (/\b(529|503)\b|overloaded/i.test(message)) return 'provider_overloaded';
  // Any other answer the API gave, as Codex and Claude Code word it.
  if (/(unexpected status|last status:|API Error:) \d{3}\b/.test(message)) return 'provider_error';
  return undefined;
}

/** The body's own message: Anthropic nests it in `error`, OpenAI puts it at the top. */
function bodyMessage(body: Fields | undefined): { type: string | undefined; message: string | undefined } {
  const inner = record(body?.error);
  return {
    type: text(inner?.type) ?? text(body?.code) ?? text(body?.type),
    message: text(inner?.message) ?? text(body?.message),
  };
}

/**
 * `chunk` is a `RUN_ERROR` in wire shape (`message`, `code`, `rawEvent`). A
 * code already on the list (one the runner set itself) is kept.
 */
export function classifyRunError(harness: HarnessName, chunk: Fields): HarnessRunError {
  const message = text(chunk.message) ?? `The ${harness} harness reported an error.`;
  if (isHarnessRunErrorCode(chunk.code)) return { code: chunk.code, message };
  const rawCode = typeof chunk.code === 'string' ? chunk.code : undefined;
  if (harness === 'chat') {
    const body = bodyMessage(record(chunk.rawEvent));
    const status = rawCode !== undefined && /^\d{3}$/.test(rawCode) ? Number(rawCode) : undefined;
    const code = byType(body.type) ?? (status !== undefined ? byStatus(status) : undefined) ?? byWords(message) ?? 'provider_error';
    // The SDK's message is "<status> <raw JSON body>"; the provider's sentence is inside it.
    return { code, message: body.message ?? message };
  }
  return { code: byWords(message) ?? 'harness_failed', message };
}
