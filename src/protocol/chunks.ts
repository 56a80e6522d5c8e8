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
    timestamp: Date.now(),
  } as unknown as StreamChunk;
}

/** The chunk types that end a run's stream. */
export function terminalChunkType(chunk: StreamChunk): 'RUN_FINISHED' | 'RUN_ERROR' | null {
  return chunk.type === 'RUN_FINISHED' || chunk.type === 'RUN_ERROR' ? chunk.type : null;
}

/** `{message, code}` of a `RUN_ERROR` chunk (AG-UI's own fields: every harness writes the one dialect). */
export function runErrorOf(chunk: StreamChunk): { message: string; code?: string } {
  const message = 'message' in chunk && typeof chunk.message === 'string' ? chunk.message : 'The harness reported an error.';
  return 'code' in chunk && typeof chunk.code === 'string' ? { message, code: chunk.code } : { message };
}
