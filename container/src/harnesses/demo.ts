import { setTimeout as sleep } from 'node:timers/promises';
import { parseDemoOptions, type ToolOutcome } from '../../../src/protocol/index.ts';
import type { HostTools } from '../host-tools.ts';
import type { HarnessContext } from './types.ts';
import { demoScript, type DemoHostCall } from './demo-script.ts';

/** Keeps the event loop alive while stalled; the runner's cancel (a signal) is the only way out. */
const STALL_TICK_MS = 60_000;

/** A scripted call of a tool the run does not have (the API checks names; the runner's request may still lack `tools`). */
function callHostTool(tools: HostTools | undefined, call: DemoHostCall): Promise<ToolOutcome> {
  if (tools === undefined) return Promise.resolve({ error: `${call.name} is not one of this run's tools (it has none)` });
  return tools.call(call);
}

/**
 * The deterministic `demo` harness: needs no key, doubles as the benchmark's
 * load generator. With `delayMs` 0 it only waits when the pipe is full, so it
 * streams as fast as the runner reads.
 */
export async function runDemo({ request, writer, tools }: HarnessContext): Promise<void> {
  const options = parseDemoOptions(request.harnessOptions);
  const script = demoScript(request, options);
  let outcome: ToolOutcome | undefined;
  for (let next = script.next(); next.done !== true; next = script.next(outcome)) {
    const step = next.value;
    outcome = undefined;
    if (step.kind === 'host-tool') {
      outcome = await callHostTool(tools, step.call);
      continue;
    }
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
