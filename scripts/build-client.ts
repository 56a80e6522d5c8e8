import { rename } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

/**
 * Bundles the client SDK (src/client) into one browser ES module,
 * public/assets/client.js, which the demo page imports. wrangler runs this
 * as the `[build]` command before `dev` and `deploy`, so the file exists
 * whenever the Worker serves `public/`; it is build output, not in git.
 *
 * Written to a temporary name and renamed: two wrangler processes building at
 * once (a test run beside `npm start`) never serve a half-written file.
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const OUTFILE = `${ROOT}public/assets/client.js`;
const temporary = `${OUTFILE}.${process.pid}.tmp`;

await build({
  entryPoints: [`${ROOT}src/client/index.ts`],
  outfile: temporary,
  bundle: true,
  format: 'esm',
  platform: 'browser',
  // Every browser with WebSocket, AbortSignal.reason and Error.cause.
  target: 'es2022',
  legalComments: 'none',
  logLevel: 'warning',
});
await rename(temporary, OUTFILE);
console.log(`built ${OUTFILE.slice(ROOT.length)}`);
