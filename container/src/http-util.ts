import type { IncomingMessage, ServerResponse } from 'node:http';
import { parseTrustedJson, runnerErrorBody, type ApiErrorCode, type RunnerErrorCode } from '../../src/protocol/index.ts';

/** A request the runner refuses before any stream starts: answered as `{"error": {code, message}}`. */
export class HttpError extends Error {
  readonly status: number;
  readonly code: ApiErrorCode | RunnerErrorCode;

  constructor(status: number, code: ApiErrorCode | RunnerErrorCode, message: string) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
    this.code = code;
  }
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
  });
  res.end(text);
}

export function sendError(res: ServerResponse, error: HttpError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendJson(res, error.status, runnerErrorBody(error.code, error.message));
}

/** Headers of every NDJSON stream answer; sent at once so the reader knows the run started before its first line. */
export function startNdjson(res: ServerResponse, extra: Record<string, string>): void {
  res.writeHead(200, {
    'content-type': 'application/x-ndjson; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    ...extra,
  });
  res.flushHeaders();
}

/** Reads a JSON body of at most `limitBytes`; 413 past it, 400 when it is not JSON. */
export async function readJsonBody(req: IncomingMessage, limitBytes: number): Promise<unknown> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    throw new HttpError(413, 'payload_too_large', `The body is ${declared} bytes; the runner accepts at most ${limitBytes}.`);
  }
  const parts: Buffer[] = [];
  let size = 0;
  for await (const part of req as AsyncIterable<Buffer>) {
    size += part.length;
    if (size > limitBytes) throw new HttpError(413, 'payload_too_large', `The body exceeds ${limitBytes} bytes.`);
    parts.push(part);
  }
  const text = Buffer.concat(parts).toString('utf8');
  if (text.trim() === '') throw new HttpError(400, 'invalid_json', 'The body is empty; send the run request as JSON.');
  try {
    // Null-prototype objects; the run request's parser then reads own fields only and refuses reserved keys where it must.
    return parseTrustedJson(text, 'body');
  } catch {
    throw new HttpError(400, 'invalid_json', 'The body is not valid JSON.');
  }
}
