import { hostToolCallChunk, type ToolDescriptor, type ToolOutcome, type ToolResult } from '../../src/protocol/index.ts';
import type { ChunkWriter } from './chunk-writer.ts';

export interface HostToolCallInput {
  /** The id the harness's own `TOOL_CALL_START` carried, so the request, the result and the call are one in the log. */
  toolCallId: string;
  name: string;
  input: unknown;
  signal?: AbortSignal;
}

/**
 * A harness's way to a host tool (SPEC "Workspace and host tools"), inside the
 * harness process. `call` writes the request chunk (`tool-input-available`)
 * to the run's stream and waits: the run object stores the chunk, executes
 * the tool, and its outcome comes back through the runner on this process's
 * stdin (`resolve`). The harness then writes the result its own way
 * (`TOOL_CALL_RESULT`), as for any tool.
 */
export class HostTools {
  /** The run's own tools: what a harness advertises to its model. */
  readonly descriptors: readonly ToolDescriptor[];
  /** Those and the ones the harness calls itself but never advertises (the `approve` tool of a run with approvals). */
  readonly #callable: readonly ToolDescriptor[];
  readonly #writer: ChunkWriter;
  readonly #waiting = new Map<string, (outcome: ToolOutcome) => void>();

  constructor(descriptors: readonly ToolDescriptor[], writer: ChunkWriter, { unadvertised = [] }: { unadvertised?: readonly ToolDescriptor[] } = {}) {
    this.descriptors = descriptors;
    this.#callable = [...descriptors, ...unadvertised];
    this.#writer = writer;
  }

  has(name: string): boolean {
    return this.#callable.some((tool) => tool.name === name);
  }

  async call({ toolCallId, name, input, signal }: HostToolCallInput): Promise<ToolOutcome> {
    if (!this.has(name)) return { error: `${name} is not one of this run's tools` };
    signal?.throwIfAborted();
    const outcome = new Promise<ToolOutcome>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiting.delete(toolCallId);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.set(toolCallId, (value) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(value);
      });
    });
    const client = this.#callable.find((tool) => tool.name === name)?.client;
    // A tool the model was never offered (an approval) is about the sandbox's own action: see HostToolCall.sandboxObserved.
    const observed = !this.descriptors.some((tool) => tool.name === name);
    const wait = this.#writer.write(hostToolCallChunk({ toolCallId, toolName: name, input, ...(client ? { client } : {}), ...(observed ? { sandboxObserved: true as const } : {}) }));
    if (wait !== undefined) await wait;
    await this.#writer.flush();
    return outcome;
  }

  /**
   * An outcome from the runner. No outcome can come before its call: the
   * waiter is set before the request chunk is written, and the run object
   * answers only calls whose chunk it stored. One for a call no longer
   * waiting is a repeat (the runner already keeps only the first) and is ignored.
   */
  resolve({ toolCallId, outcome }: ToolResult): void {
    const waiter = this.#waiting.get(toolCallId);
    if (waiter === undefined) return;
    this.#waiting.delete(toolCallId);
    waiter(outcome);
  }

}
