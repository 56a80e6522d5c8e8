import { readFile } from 'node:fs/promises';
import type { Plugin } from 'vite';

/**
 * wrangler bundles `*.sql` as text (the `rules` in wrangler.toml); Vite, which
 * bundles the tests, needs the same rule.
 */
export function sqlText(): Plugin {
  return {
    name: 'harness-relay:sql-text',
    enforce: 'pre',
    async load(id) {
      if (!id.endsWith('.sql')) return null;
      return `export default ${JSON.stringify(await readFile(id, 'utf8'))};`;
    },
  };
}
