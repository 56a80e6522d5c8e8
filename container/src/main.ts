/**
 * CLI entry: `node container/src/main.ts` (Node >= 22.18 runs the TypeScript
 * as is). Configuration comes from the environment; see config.ts.
 */
import { startRunner } from './server.ts';

const runner = await startRunner().catch((error: unknown) => {
  // No token, a bad variable, a port in use: say which and exit non-zero, no stack trace.
  console.error(`runner: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
console.log(`runner listening on ${runner.url} (harnesses: ${runner.harnesses().join(', ')})`);

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.once(signal, () => {
    runner.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('runner: shutdown failed', error);
        process.exit(1);
      },
    );
  });
}
