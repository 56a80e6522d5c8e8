import type { JSONSchema, Tool, ToolExecutionContext } from '@tanstack/ai';
import type { HostTools } from '../host-tools.ts';

/**
 * The run's host tools as `chat()` server tools (SPEC "Workspace and host
 * tools"): the model sees each one's name, description and JSON Schema;
 * `execute` asks the relay through `HostTools` under the call id `chat()`
 * gave the model's call, so its TOOL_CALL_* chunks, the request and the
 * result are one call in the log.
 *
 * An `{error}` outcome is thrown: `chat()` turns a throwing `execute` into a
 * failed call (`{"error": …}`, state `output-error`) that the model sees, and
 * the loop goes on.
 */
export function hostChatTools(tools: HostTools): Tool[] {
  return tools.descriptors.map(
    ({ name, description, inputSchema }): Tool => ({
      name,
      description,
      // Checked as a JSON Schema object by the relay (parseToolDescriptors); the adapters hand it to the provider as is.
      inputSchema: inputSchema as JSONSchema,
      execute: async (args: unknown, context?: ToolExecutionContext) => {
        const toolCallId = context?.toolCallId;
        // @tanstack/ai 0.42's executeToolCalls always sets it; without it the result could not be matched to the call.
        if (toolCallId === undefined) throw new Error(`chat() called ${name} without a tool call id`);
        const outcome = await tools.call({ toolCallId, name, input: args, ...(context?.abortSignal !== undefined ? { signal: context.abortSignal } : {}) });
        if ('error' in outcome) throw new Error(outcome.error);
        return outcome.output;
      },
    }),
  );
}
