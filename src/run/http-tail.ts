import { eventFrameJson, sseEventText, statusFrame, toNdjson, toSse } from '../protocol/index.ts';
import type { Tails } from './tails.ts';

export type HttpTailFormat = 'sse' | 'ndjson';

const encoder = new TextEncoder();

/**
 * The tail over HTTP: SSE (`id: <seq>` per event, a final `event: status`) or
 * NDJSON (one frame per line), read from the run's fan-out. The stream is
 * pull-driven, so a slow reader slows the replay instead of growing a buffer
 * in the object.
 */
export function httpTail(tails: Tails, fromSeq: number, format: HttpTailFormat): Response {
  const controller = new AbortController();
  const frames = tails.stream(fromSeq, controller.signal);
  const body = new ReadableStream<Uint8Array>({
    async pull(stream) {
      const next = await frames.next();
      if (next.done) {
        stream.close();
        return;
      }
      if (Array.isArray(next.value)) {
        let text = '';
        for (const event of next.value) {
          // SSE carries the bare chunk; NDJSON the envelope. Both from stored JSON text.
          text += format === 'sse' ? sseEventText(event.seq, event.raw) : `${eventFrameJson(event.seq, event.raw)}\n`;
        }
        stream.enqueue(encoder.encode(text));
        return;
      }
      const status = statusFrame(next.value);
      stream.enqueue(encoder.encode(format === 'sse' ? toSse(status) : toNdjson(status)));
      stream.close();
    },
    cancel() {
      controller.abort();
      void frames.return(undefined);
    },
  });
  return new Response(body, {
    headers: {
      'content-type': format === 'sse' ? 'text/event-stream; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    },
  });
}
