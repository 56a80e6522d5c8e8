import { setTimeout as sleep } from 'node:timers/promises';
import { parseDemoOptions } from '../../../src/protocol/index.ts';
import type { HarnessContext } from './types.ts';
import { demoScript } from './demo-script.ts';

/** Keeps the event loop alive while stalled; the runner's cancel (a signal) is the only way out. */
const STALL_TICK_MS = 60_000;

/**
 * The deterministic `demo` harness: needs no key, doubles as the benchmark's
 * load generator. With `delayMs` 0 it only waits when the pipe is full, so it
 * streams as fast as the runner reads.
 */
export async function runDemo({ request, writer }: HarnessContext): Promise<void> {
  const options = parseDemoOptions(request.harnessOptions);
  for (const step of demoScript(request, options)) {
    if (step.kind === 'crash') {
      await writer.close();
      process.exit(1);
    }
    if (step.kind === 'stall') {
      await writer.close();
      setInterval(() => {}, STALL_TICK_MS);
      return new Promise<never>(() => {});
    }
    const wait = writer.write(step.chunk);
    if (wait !== undefined) await wait;
    if (options.delayMs > 0) await sleep(options.delayMs);
  }
}
