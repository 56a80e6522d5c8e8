import type { WireChunk } from '../chunk-writer.ts';
import { RunNormalizer } from './normalize.ts';
import type { HarnessContext } from './types.ts';

/**
 * Writes a `chat()` stream to the runner in the relay's one dialect
 * (`RunNormalizer`): `RUN_STARTED` with the run's id first, exactly one
 * terminal chunk last, a thrown error as `RUN_ERROR harness_failed`.
 */
export async function pipeChatStream(stream: AsyncIterable<{ readonly type: unknown }>, { request, writer }: HarnessContext): Promise<void> {
  const normalizer = new RunNormalizer(request.harness, request.runId, request.threadId);
  const write = async (chunks: WireChunk[]) => {
    for (const chunk of chunks) {
      const wait = writer.write(chunk);
      if (wait !== undefined) await wait;
    }
  };
  let failure: { message: string } | undefined;
  try {
    for await (const chunk of stream) {
      // Both `@tanstack/ai` releases' chunks are JSON objects with a string `type`.
      await write(normalizer.push(chunk as WireChunk));
    }
  } catch (error) {
    // Redacted by the writer like every other line.
    failure = { message: `The ${request.harness} harness failed: ${error instanceof Error ? error.message : String(error)}` };
  }
  await write(normalizer.finish(failure));
}
