import type { StreamChunk } from '@tanstack/ai';
import type { RelayRunErrorCode } from './errors.ts';

/**
 * A `RUN_ERROR` chunk the relay writes itself when the harness could not say
 * why the run ended (runner gone, stalled, an oversized line).
 *
 * Core types `type` with `@ag-ui/core`'s string enum, which a literal cannot
 * satisfy without importing the enum at runtime; the wire value is the same
 * string, so the one cast lives here.
 */
export function relayRunError(runId: string, threadId: string, code: RelayRunErrorCode, message: string): StreamChunk {
  return {
    type: 'RUN_ERROR',
    runId,
    threadId,
    message,
    code,
    error: { message, code },
    timestamp: Date.now(),
  } as unknown as StreamChunk;
}

/** The chunk types that end a run's stream. */
export function terminalChunkType(chunk: StreamChunk): 'RUN_FINISHED' | 'RUN_ERROR' | null {
  return chunk.type === 'RUN_FINISHED' || chunk.type === 'RUN_ERROR' ? chunk.type : null;
}

/** `{message, code}` of a `RUN_ERROR` chunk, whichever of its two shapes the harness used. */
export function runErrorOf(chunk: StreamChunk): { message: string; code?: string } {
  const c = chunk as { message?: unknown; code?: unknown; error?: { message?: unknown; code?: unknown } };
  const message = typeof c.message === 'string' ? c.message : typeof c.error?.message === 'string' ? c.error.message : 'The harness reported an error.';
  const code = typeof c.code === 'string' ? c.code : typeof c.error?.code === 'string' ? c.error.code : undefined;
  return code === undefined ? { message } : { message, code };
}
