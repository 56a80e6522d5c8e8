import type { Sandbox } from '@cloudflare/sandbox';

/**
 * Whether Cloudflare will run a container for a sandbox at all, asked before
 * the SDK's own control calls. Those calls retry a 503 for two minutes or
 * more (the SDK's transport treats every 503 as "container starting"), so a
 * start the platform refuses — `max_instances` reached, or starts
 * rate-limited — would hold a new run that long and then fail with the SDK's
 * generic message. One `containerFetch` to the control server's ping gets
 * the SDK's own classification of the refusal, without those retries
 * (Sandbox.containerFetch: a 503 `CONTAINER_UNAVAILABLE` once its wait for an
 * instance — `SANDBOX_INSTANCE_TIMEOUT_MS`, 30 s by default — is over, or the
 * rate-limit message inside its "Container is starting" 503 at once), and
 * boots the container when it is admitted.
 */

/** The control server's port in every sandbox container (the SDK refuses it for anything else). */
const CONTROL_PORT = 3000;
const RATE_LIMITED = 'you are requesting too many containers per second';
/** The platform's admission messages, as the SDK matches them (CONTAINER_UNAVAILABLE_SIGNATURES). */
const NO_INSTANCE = ['there is no container instance', 'maximum number of running container instances exceeded'];

export class ContainerRefusedError extends Error {
  override name = 'ContainerRefusedError';
}

/** Resolves once the container runs (or is still starting); throws ContainerRefusedError when the platform refuses it. */
export async function admitContainer(sandbox: Sandbox, sandboxId: string): Promise<void> {
  const response = await sandbox.containerFetch(new Request(`http://localhost:${CONTROL_PORT}/api/ping`), CONTROL_PORT);
  if (response.status !== 503 && response.status !== 429) {
    // Read, not cancelled: @cloudflare/containers pipes every body and leaves a cancelled pipe's rejection unhandled.
    await response.arrayBuffer().catch(() => undefined);
    return;
  }
  const refusal = refusalOf(response.status, await response.text().catch(() => ''));
  if (refusal) throw new ContainerRefusedError(refusalMessage(sandboxId, refusal));
}

type Refusal = { kind: 'capacity' | 'rate'; detail: string };

/** The SDK's error body, when it is one; anything else (a container still starting) is not a refusal. */
export function refusalOf(status: number, body: string): Refusal | null {
  let parsed: { code?: unknown; message?: unknown; context?: { error?: unknown; reason?: unknown } } = {};
  try {
    const value: unknown = JSON.parse(body);
    if (typeof value === 'object' && value !== null) parsed = value as typeof parsed;
  } catch {
    parsed = {};
  }
  const text = [body, parsed.context?.error].filter((part) => typeof part === 'string').join(' ').toLowerCase();
  if (status === 429 || text.includes(RATE_LIMITED)) return { kind: 'rate', detail: RATE_LIMITED };
  if (parsed.code === 'CONTAINER_UNAVAILABLE' || NO_INSTANCE.some((signature) => text.includes(signature))) {
    const detail = typeof parsed.message === 'string' ? parsed.message : body.split('\n')[0]!.trim();
    return { kind: 'capacity', detail: detail || 'no container instance is available' };
  }
  return null;
}

export function refusalMessage(sandboxId: string, refusal: Refusal): string {
  const why =
    refusal.kind === 'capacity'
      ? 'the deployment is at its max_instances: every sandbox awake within its sleepAfter window holds one instance'
      : 'container starts are being rate-limited';
  return (
    `Cloudflare did not start a container for sandbox ${sandboxId} (${refusal.detail}): ${why}. ` +
    'Raise max_instances under [[containers]] in wrangler.toml, shorten SANDBOX_SLEEP_AFTER so idle sandboxes free their instance sooner, or retry later.'
  );
}
