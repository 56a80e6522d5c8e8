import type { RunnerRunRequest } from '../../../src/protocol/index.ts';
import type { ChunkWriter } from '../chunk-writer.ts';
import type { HostTools } from '../host-tools.ts';
import type { Redactor } from '../redact.ts';

/** What a harness gets inside its process. It writes chunks and returns when the run is over. */
export interface HarnessContext {
  request: RunnerRunRequest;
  /** The run's working directory (per tenant and thread), for the harnesses that work on files. */
  workspace: string | undefined;
  writer: ChunkWriter;
  /** The process environment: the only place credentials come from. */
  env: Record<string, string | undefined>;
  redact: Redactor;
  /** The run's host tools, when it has any: the harness advertises them and calls them through this. */
  tools?: HostTools;
}

/**
 * Runs one turn. Resolving means the stream is complete (the harness wrote its
 * terminal chunk); throwing makes the process write a `RUN_ERROR` for it.
 */
export type Harness = (ctx: HarnessContext) => Promise<void>;
