import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where workspaces go when RUNNER_WORKSPACE_ROOT is unset (the image sets `/workspace`). */
export function defaultWorkspaceRoot(): string {
  return join(tmpdir(), 'harness-relay-workspaces');
}

/**
 * A thread's working directory: `<root>/<sha256 of (tenant, threadId)>`.
 * Hashed, never joined from input, so no request names a path, and two
 * tenants that use the same threadId get two directories. The pair is
 * JSON-encoded before hashing so no (tenant, thread) pair can collide with
 * another by moving a separator.
 */
export function workspaceDir(root: string, tenant: string | null, threadId: string): string {
  return join(root, createHash('sha256').update(JSON.stringify([tenant, threadId])).digest('hex'));
}
