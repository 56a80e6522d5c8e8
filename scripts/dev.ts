import { readDevVars } from './dev-vars.ts';
import { startLocalStack } from './local-stack.ts';

/** `npm start`: the local stack on PORT (default 8787), the runner on RUNNER_PORT (default PORT + 1). */
const devVars = readDevVars();
const setting = (name: string) => process.env[name] ?? devVars[name];
const port = Number(setting('PORT') ?? 8787);
const runnerPort = Number(setting('RUNNER_PORT') ?? port + 1);
if (!Number.isInteger(port) || port <= 0 || !Number.isInteger(runnerPort) || runnerPort <= 0) {
  console.error('PORT and RUNNER_PORT must be port numbers.');
  process.exit(1);
}

console.log('Starting harness-relay: the runner, then the Worker under wrangler dev…');
const stack = await startLocalStack({ port, runnerPort, onOutput: process.env.VERBOSE ? (line) => console.log(`[wrangler] ${line}`) : undefined }).catch((error: unknown) => {
  console.error(`Could not start: ${(error as Error).message}`);
  process.exit(1);
});

const harness = setting('DEFAULT_HARNESS') || 'demo';
const auth = setting('API_TOKEN') ? 'on (Authorization: Bearer $API_TOKEN)' : 'OFF — API_TOKEN is unset; fine on loopback, never deploy like this';
console.log(`
  harness-relay is running
    demo page + API   ${stack.url}
    runner            ${stack.runnerUrl}  (harnesses here: ${stack.runner?.harnesses().join(', ')})
    runner token      fresh for this start, held by the runner and the Worker only
    default harness   ${harness}
    auth              ${auth}

  Try: curl -s -X POST ${stack.url}/runs -H 'content-type: application/json' -d '{"prompt":"hello"}'
  Ctrl-C stops everything.
`);

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping the Worker and the runner…`);
  await stack.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));
stack.worker.on('exit', (code) => {
  if (stopping) return;
  console.error(`wrangler dev exited unexpectedly (code ${code}); stopping the runner.`);
  void stack.close().then(() => process.exit(1));
});
