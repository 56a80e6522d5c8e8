import type { RunnerRunRequest } from '../../../src/protocol/index.ts';

/**
 * `withSandbox` middleware over the local-process provider: the container is
 * already the isolation boundary, so the CLI runs directly in it, in the
 * run's workspace directory (kept across a thread's turns).
 */
export async function localSandbox(request: RunnerRunRequest) {
  const [{ defineSandbox, defineWorkspace, withSandbox }, { localProcessSandbox }] = await Promise.all([
    import('@tanstack/ai-sandbox'),
    import('@tanstack/ai-sandbox-local-process'),
  ]);
  if (request.workspace === undefined) throw new Error('the runner gave this harness no workspace directory');
  return withSandbox(
    defineSandbox({
      id: 'harness-relay',
      provider: localProcessSandbox({ dir: request.workspace }),
      // The adapters require a workspace; `none` adds no clone, setup or AGENTS.md to the directory.
      workspace: defineWorkspace({ source: { type: 'none' } }),
      // One process per run: there is no longer-lived store to resume a sandbox from.
      lifecycle: { reuse: 'none' },
    }),
  );
}
