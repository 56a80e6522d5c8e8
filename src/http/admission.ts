import type { RelayConfig, RelayEnv } from '../config.ts';
import { tenantStub } from '../tenant/tenant-object.ts';
import { ApiError } from './errors.ts';

/**
 * `MAX_ACTIVE_RUNS` per tenant, counted by the tenant's own object. A run
 * takes its slot before anything of it is stored and gives it back on every
 * way it ends; the lease is a backstop for a release that never arrived.
 */

/** A run's end frees a slot at once; this only spaces out a client's retries. */
export const TOO_MANY_RUNS_RETRY_AFTER_SECONDS = 5;
/** Past the longest a run may last and its stall budget, so a live run's slot is never reclaimed. */
const LEASE_MARGIN_MS = 5 * 60_000;

export interface Slot {
  /** Gives the slot back if this request took it and made no run (a concurrent retry's slot stays). */
  giveBack(): Promise<void>;
}

/** Takes a slot for `runId` or throws `429 too_many_runs` with `Retry-After`. */
export async function admitRun(env: RelayEnv, config: RelayConfig, tenant: string | null, runId: string): Promise<Slot> {
  const { maxActiveRuns, runMaxMs } = config.limits;
  const holder = crypto.randomUUID();
  const stub = tenantStub(env, tenant);
  const result = await stub.admit({ runId, holder, limit: maxActiveRuns, leaseMs: runMaxMs + config.stallTimeoutMs + LEASE_MARGIN_MS });
  if (result.kind === 'full') {
    throw new ApiError(
      429,
      'too_many_runs',
      `This tenant already has ${result.active} runs going (MAX_ACTIVE_RUNS is ${maxActiveRuns}). Wait for one to end, or cancel one, then retry.`,
      { 'retry-after': String(TOO_MANY_RUNS_RETRY_AFTER_SECONDS) },
    );
  }
  return { giveBack: () => stub.release(runId, holder) };
}
