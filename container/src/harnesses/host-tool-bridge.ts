import type { AnyTool } from '@tanstack/ai';
import type { HostTools } from '../host-tools.ts';
import { ToolCallCorrelator } from './tool-call-correlator.ts';

type Chunk = { readonly type: unknown } & Record<string, unknown>;

/**
 * The run's host tools as `chat()` tools for a CLI harness (SPEC "Workspace
 * and host tools"), the way the TanStack seed gives them: `remoteToolStubs`
 * rebuilds each descriptor as a tool whose `execute` is ours, and the adapter
 * serves them to the CLI through its loopback MCP bridge (`--mcp-config` for
 * Claude Code, `mcp_servers.tanstack` for Codex, a per-run bearer token).
 *
 * A bridged call runs through `HostTools.call`: it takes the model's own id
 * from the stream (`ToolCallCorrelator`), writes the request chunk and waits
 * for the run object's outcome; an `{error}` outcome is thrown, which the
 * bridge answers as an MCP `isError` result, so the model sees a failed call
 * and the run goes on.
 */
export class BridgedHostTools {
  readonly #tools: HostTools;
  readonly #correlator: ToolCallCorrelator;

  constructor(tools: HostTools, correlator = new ToolCallCorrelator()) {
    this.#tools = tools;
    this.#correlator = correlator;
  }

  get names(): string[] {
    return this.#tools.descriptors.map((tool) => tool.name);
  }

  /** The `chat()` tools the adapter bridges. */
  async stubs(): Promise<AnyTool[]> {
    const { remoteToolStubs } = await import('@tanstack/ai-sandbox');
    // Parsed by `parseToolDescriptors`: every `inputSchema` is an object schema.
    const descriptors = this.#tools.descriptors.map((tool) => ({ ...tool, inputSchema: { ...tool.inputSchema, type: 'object' as const } }));
    return remoteToolStubs(descriptors, {
      execute: async (name, input, options) => {
        const signal = options?.signal;
        const toolCallId = await this.#correlator.claim(name, input, signal);
        const outcome = await this.#tools.call({ toolCallId, name, input, ...(signal !== undefined ? { signal } : {}) });
        if ('error' in outcome) throw new Error(outcome.error);
        return outcome.output;
      },
    });
  }

  /**
   * `stream` unchanged, each host tool call it shows offered to the
   * correlator once the consumer has taken its `TOOL_CALL_END` (the generator
   * resumes only after the consumer's loop body, which writes the chunk): so
   * the request chunk always follows the call's `TOOL_CALL_START/ARGS/END` in
   * the log. Calls are told apart by name and input only: a built-in tool
   * named like a host tool, called with the very same input, could be taken
   * for it.
   */
  async *observe<C extends { readonly type: unknown }>(stream: AsyncIterable<C>): AsyncGenerator<C> {
    for await (const chunk of stream) {
      yield chunk;
      if (chunk.type !== 'TOOL_CALL_END') continue;
      const end = chunk as unknown as Chunk;
      const name = typeof end.toolCallName === 'string' ? end.toolCallName : end.toolName;
      if (typeof end.toolCallId !== 'string' || typeof name !== 'string' || !this.#tools.has(name)) continue;
      this.#correlator.offer({ toolCallId: end.toolCallId, name, input: end.input ?? {} });
    }
  }
}
