import { MAX_CREATE_RUN_BYTES } from '../protocol/index.ts';
import { ApiError } from './errors.ts';

/**
 * Reads a JSON body of at most `MAX_CREATE_RUN_BYTES`, counting bytes as they
 * arrive: a lying or absent Content-Length cannot make the Worker buffer more.
 */
export async function readJsonBody(request: Request, maxBytes = MAX_CREATE_RUN_BYTES): Promise<unknown> {
  const type = request.headers.get('content-type');
  if (type !== null && !/^application\/(?:[\w.+-]+\+)?json\b/i.test(type)) {
    throw new ApiError(415, 'unsupported_media_type', `Send the body as application/json (got ${type}).`);
  }
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > maxBytes) throw tooLarge(maxBytes);
  if (!request.body) throw new ApiError(400, 'invalid_json', 'The request has no body; send a JSON object.');
  const reader = request.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge(maxBytes);
    }
    parts.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const part of parts) {
    bytes.set(part, offset);
    offset += part.byteLength;
  }
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw new ApiError(400, 'invalid_json', 'The body is not valid UTF-8 JSON.');
  }
}

function tooLarge(maxBytes: number): ApiError {
  return new ApiError(413, 'payload_too_large', `The body is over ${maxBytes} bytes. Send a shorter prompt or fewer messages.`);
}
