import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The runner is plain Node: its tests start the real server and spawn real
// harness processes, so they run outside workerd, from the repository root.
export default defineConfig({
  root: fileURLToPath(new URL('..', import.meta.url)),
  test: {
    environment: 'node',
    include: ['container/test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
