import activeRuns from '../../migrations/tenant/0001_active_runs.sql';
import type { Migration } from '../storage/migrations.ts';

/** The tenant object's schema, in order. */
export const TENANT_MIGRATIONS: readonly Migration[] = [{ version: 1, name: 'tenant/0001_active_runs', sql: activeRuns }];
