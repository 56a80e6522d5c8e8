import type { chat, ModelMessage } from '@tanstack/ai';
import type { WorkspaceRequest } from '../../../src/protocol/index.ts';
import { pipeChatStream } from './chat-stream.ts';
import { tappedAdapter, type CliEventTap } from './cli-events.ts';
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

/**
 * Runs a coding-agent adapter with `chat()` in the local sandbox and writes its
 * stream to the runner: the part the CLI harnesses share.
 */
export async function pipeSandboxedAgent(ctx: HarnessContext, adapter: AgentAdapter, sessionId: string | undefined, tap: CliEventTap): Promise<void> {
  const { request } = ctx;
  const [{ chat }, sandbox] = await Promise.all([import('@tanstack/ai'), localSandbox(ctx.workspace)]);
  const agent = () =>
    chat({
      adapter: tappedAdapter(adapter, tap),
      // Same JSON on the wire; the relay's and the adapter's `@tanstack/ai` releases only differ in type identity.
      messages: request.messages as unknown as ModelMessage[],
      runId: request.runId,
      threadId: request.threadId,
      middleware: [sandbox],
      ...(sessionId !== undefined ? { modelOptions: { sessionId } } : {}),
    });
  const { workspace } = request;
  const dir = ctx.workspace;
  if (workspace === undefined || dir === undefined) return pipeChatStream(agent(), ctx);
  // One stream, so the normalizer puts RUN_STARTED before the workspace step and ends a failed one.
  async function* prepared(spec: WorkspaceRequest, at: string) {
    if (yield* workspaceStep(spec, at, ctx.env)) yield* agent();
  }
  await pipeChatStream(prepared(workspace, dir), ctx);
}
