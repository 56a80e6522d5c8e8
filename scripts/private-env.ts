import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh runner token: 32 random bytes as hex, new for every start of a local stack. */
export function newRunnerToken(): string {
  return randomBytes(32).toString('hex');
}

export interface PrivateEnvFile {
  /** Pass to `wrangler dev --env-file`. */
  path: string;
  remove(): void;
}

/** Values are written unquoted; anything that dotenv could read differently is refused rather than escaped. */
const PLAIN_VALUE = /^[A-Za-z0-9_.:/-]*$/;

/**
 * Secrets for `wrangler dev` (4.156 reads `--env-file` files as secret
 * bindings), in a file only this user can read, in a directory only this
 * user can list. Not `--var NAME:value`: a process's command line is
 * world-readable (`ps`, /proc/<pid>/cmdline), its files are not.
 */
export function writePrivateEnvFile(vars: Record<string, string>): PrivateEnvFile {
  const dir = mkdtempSync(join(tmpdir(), 'harness-relay-secrets-')); // mode 0700
  const path = join(dir, 'worker.env');
  const lines = Object.entries(vars).map(([name, value]) => {
    if (!PLAIN_VALUE.test(value)) throw new Error(`${name}: a private env value must match ${PLAIN_VALUE}`);
    return `${name}=${value}\n`;
  });
  writeFileSync(path, lines.join(''), { mode: 0o600 });
  return { path, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
