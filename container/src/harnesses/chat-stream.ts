import { relayRunError } from '../../../src/protocol/index.ts';
import type { HarnessContext } from './types.ts';

/** The AG-UI type of a chunk, whichever `@tanstack/ai` release produced it. */
interface AnyChunk {
  readonly type: unknown;
}

function isTerminal(chunk: AnyChunk): boolean {
  return chunk.type === 'RUN_FINISHED' || chunk.type === 'RUN_ERROR';
}

/**
 * Writes a `chat()` stream to the runner, ending with exactly one terminal chunk.
 *
 * The relay ends a run at its first terminal chunk, but an adapter may yield
 * more after it (Claude Code's `file.changed` diff event comes after
 * `RUN_FINISHED`, and an agent loop finishes once per model turn). So the
 * terminal chunk is held back and written last; only the final one counts.
 */
export async function pipeChatStream(stream: AsyncIterable<AnyChunk>, { request, writer }: HarnessContext): Promise<void> {
  let terminal: AnyChunk | undefined;
  try {
    for await (const chunk of stream) {
      if (isTerminal(chunk)) {
        terminal = chunk;
        continue;
      }
      const wait = writer.write(chunk);
      if (wait !== undefined) await wait;
    }
  } catch (error) {
    // Redacted by the writer like every other line.
    const message = error instanceof Error ? error.message : String(error);
    terminal = relayRunError(request.runId, request.threadId, 'runner_error', `The ${request.harness} harness failed: ${message}`);
  }
  writer.write(terminal ?? relayRunError(request.runId, request.threadId, 'runner_error', `The ${request.harness} harness ended without RUN_FINISHED or RUN_ERROR.`));
}
