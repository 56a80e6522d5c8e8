import { DurableObject } from 'cloudflare:workers';
import type { RelayEnv } from '../config.ts';
import { hasSchema, migrate } from '../storage/migrations.ts';
import { TENANT_MIGRATIONS } from './schema.ts';

/** One object per tenant, the tenant-less default its own: tenants match `TENANT_PATTERN` (no `:`), so two names never collide. */
export function tenantObjectName(tenant: string | null): string {
  return tenant === null ? 'tenant' : `tenant:${tenant}`;
}

export function tenantStub(env: RelayEnv, tenant: string | null) {
  return env.TENANTS.get(env.TENANTS.idFromName(tenantObjectName(tenant)));
}

export interface Admission {
  runId: string;
  /** A nonce of the admitting request: `release(runId, holder)` then frees only a slot this request took. */
  holder: string;
  /** `MAX_ACTIVE_RUNS`. */
  limit: number;
  /**
   * How long the slot is held if no release ever arrives: past the longest a
   * run may last, so only a lost release (never a live run) is reclaimed.
   */
  leaseMs: number;
}

export type AdmissionResult = { kind: 'admitted'; active: number } | { kind: 'full'; active: number };

/**
 * One per tenant (the tenant-less default included): counts the runs that
 * hold a slot. Admitting is idempotent per run id, so concurrent retries of
 * one `Idempotency-Key` take one slot; releasing is idempotent, so every way
 * a run ends can release without counting how often it did.
 */
export class TenantObject extends DurableObject<RelayEnv> {
  readonly #sql: SqlStorage;

  constructor(ctx: DurableObjectState, env: RelayEnv) {
    super(ctx, env);
    this.#sql = ctx.storage.sql;
  }

  #ready(): void {
    this.ctx.storage.transactionSync(() => migrate(this.#sql, TENANT_MIGRATIONS, Date.now()));
  }

  admit(admission: Admission): AdmissionResult {
    this.#ready();
    const now = Date.now();
    return this.ctx.storage.transactionSync(() => {
      this.#sql.exec('DELETE FROM active_runs WHERE lease_until <= ?', now);
      const held = this.#sql.exec('SELECT 1 FROM active_runs WHERE run_id = ?', admission.runId).toArray().length > 0;
      const active = this.#count();
      if (held) return { kind: 'admitted', active };
      if (active >= admission.limit) return { kind: 'full', active };
      this.#sql.exec('INSERT INTO active_runs (run_id, holder, admitted_at, lease_until) VALUES (?, ?, ?, ?)', admission.runId, admission.holder, now, now + admission.leaseMs);
      return { kind: 'admitted', active: active + 1 };
    });
  }

  /**
   * Frees the run's slot: the run's end gives no `holder` and always frees
   * it; a request that made no run gives its own, and frees only a slot it
   * took. A run that holds none is a no-op.
   */
  release(runId: string, holder?: string): void {
    if (!hasSchema(this.#sql)) return;
    if (holder === undefined) this.#sql.exec('DELETE FROM active_runs WHERE run_id = ?', runId);
    else this.#sql.exec('DELETE FROM active_runs WHERE run_id = ? AND holder = ?', runId, holder);
  }

  /** The runs holding a slot now (a read: an unknown tenant writes nothing). */
  activeRuns(): string[] {
    if (!hasSchema(this.#sql)) return [];
    return this.#sql
      .exec<{ run_id: string }>('SELECT run_id FROM active_runs WHERE lease_until > ? ORDER BY admitted_at', Date.now())
      .toArray()
      .map((row) => row.run_id);
  }

  #count(): number {
    return this.#sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM active_runs').one().n;
  }
}
