/**
 * Schema changes live in numbered `.sql` files applied in order; the version
 * reached is recorded in `schema_migrations`, so each file runs exactly once
 * per object. Add a file and list it in the object's schema module — never
 * patch a table by catching "no such column".
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const LEDGER = 'schema_migrations';

/** Whether this object's database has ever been initialised. Reads only: an unknown object writes nothing. */
export function hasSchema(sql: SqlStorage): boolean {
  return sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, LEDGER).toArray().length > 0;
}

export function schemaVersion(sql: SqlStorage): number {
  if (!hasSchema(sql)) return 0;
  const row = sql.exec<{ version: number | null }>(`SELECT MAX(version) AS version FROM ${LEDGER}`).one();
  return row.version ?? 0;
}

export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.version), 0);
}

/**
 * Brings the schema up to date. Callers run it inside `transactionSync` (or
 * with no `await` around it) so a half-applied file never becomes durable.
 */
export function migrate(sql: SqlStorage, migrations: readonly Migration[], now: number): void {
  if (!hasSchema(sql)) {
    sql.exec(`CREATE TABLE ${LEDGER} (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)`);
  }
  const current = schemaVersion(sql);
  for (const migration of migrations) {
    if (migration.version <= current) continue;
    sql.exec(migration.sql);
    sql.exec(`INSERT INTO ${LEDGER} (version, name, applied_at) VALUES (?, ?, ?)`, migration.version, migration.name, now);
  }
}
