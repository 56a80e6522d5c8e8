import type { chat, ModelMessage } from '@tanstack/ai';
import type { WorkspaceRequest } from '../../../src/protocol/index.ts';
import { pipeChatStream } from './chat-stream.ts';
import { tappedAdapter, type CliEventTap } from './cli-events.ts';
import type { ClientApprovals } from './client-approvals.ts';
import type { BridgedHostTools } from './host-tool-bridge.ts';
import type { HarnessContext } from './types.ts';
import { workspaceStep } from './workspace-setup.ts';

/** A coding-agent text adapter (Claude Code, Codex) as `chat()` takes it. */
export type AgentAdapter = Parameters<typeof chat>[0]['adapter'];

/**
 * `withSandbox` middleware over the local-process provider: the container is
 * already the isolation boundary, so the CLI runs directly in it, in the
 * run's workspace directory (kept across a thread's turns).
 */
export async function localSandbox(workspace: string | undefined) {
  const [{ defineSandbox, defineWorkspace, withSandbox }, { localProcessSandbox }] = await Promise.all([
    import('@tanstack/ai-sandbox'),
    import('@tanstack/ai-sandbox-local-process'),
  ]);
  if (workspace === undefined) throw new Error('the runner gave this harness no workspace directory');
  return withSandbox(
    defineSandbox({
      id: 'harness-relay',
      provider: localProcessSandbox({ dir: workspace }),
      // The adapters require a workspace; `none` adds no clone, setup or AGENTS.md here:
      // the run's `workspace` is prepared before (workspace-setup.ts), once per thread, with its progress in the stream.
      workspace: defineWorkspace({ source: { type: 'none' } }),
      // One process per run: there is no longer-lived store to resume a sandbox from.
      lifecycle: { reuse: 'none' },
    }),
  );
}

export interface SandboxedAgentOptions {
  sessionId: string | undefined;
  tap: CliEventTap;
  /** The run's host tools, which the adapter serves to the CLI through its MCP bridge. */
  hostTools?: BridgedHostTools;
  /** The CLI's permission prompts, answered by a person (`approvals: 'client'`). */
  approvals?: ClientApprovals;
}

/**
 * Runs a coding-agent adapter with `chat()` in the local sandbox and writes its
 * stream to the runner: the part the CLI harnesses share.
 */
export async function pipeSandboxedAgent(ctx: HarnessContext, adapter: AgentAdapter, { sessionId, tap, hostTools, approvals }: SandboxedAgentOptions): Promise<void> {
  const { request } = ctx;
  const [{ chat }, sandbox, tools, approving] = await Promise.all([import('@tanstack/ai'), localSandbox(ctx.workspace), hostTools?.stubs(), approvals?.middleware()]);
  const agent = () =>
    chat({
      adapter: tappedAdapter(adapter, tap),
      // Same JSON on the wire; the relay's and the adapter's `@tanstack/ai` releases only differ in type identity.
      messages: request.messages as unknown as ModelMessage[],
      runId: request.runId,
      threadId: request.threadId,
      middleware: approving !== undefined ? [sandbox, approving] : [sandbox],
      // The adapters bridge these to the CLI; `chat()` never runs one itself (a CLI turn never ends with `tool_calls`).
      ...(tools !== undefined && tools.length > 0 ? { tools } : {}),
      ...(sessionId !== undefined ? { modelOptions: { sessionId } } : {}),
    });
  const { workspace } = request;
  const dir = ctx.workspace;
  const observed = <C extends { readonly type: unknown }>(stream: AsyncIterable<C>) => {
    const bridged = hostTools === undefined ? stream : hostTools.observe(stream);
    return approvals === undefined ? bridged : approvals.observe(bridged);
  };
  if (workspace === undefined || dir === undefined) return pipeChatStream(observed(agent()), ctx);
  // One stream, so the normalizer puts RUN_STARTED before the workspace step and ends a failed one.
  async function* prepared(spec: WorkspaceRequest, at: string) {
    if (yield* workspaceStep(spec, at, ctx.env)) yield* agent();
  }
  await pipeChatStream(observed(prepared(workspace, dir)), ctx);
}
