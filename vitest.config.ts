import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { quietRunner } from './test/support/quiet-runner.ts';
import { sqlText } from './test/support/sql-text.ts';

export default defineConfig({
  test: {
    projects: [
      {
        // The log, the tails and the API in workerd, fed by the tests through
        // RunObject.ingest while a quiet runner double keeps each run open.
        plugins: [
          sqlText(),
          cloudflareTest({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: { RUNNER_URL: 'http://quiet-runner.test', STALL_TIMEOUT_SECONDS: '3600' },
              outboundService: quietRunner,
            },
          }),
        ],
        test: { name: 'workers', include: ['test/workers/**/*.test.ts'] },
      },
    ],
  },
});
