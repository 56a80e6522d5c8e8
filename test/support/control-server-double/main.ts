/**
 * The container's entrypoint in the stand-in: the control-server double on
 * the host port behind container port 3000. Started by the container host
 * (test/support/container-host.ts) as the leader of a fresh process group,
 * with the image's environment plus the layout variables. Like the real
 * entrypoint (sandbox-container main.ts), SIGTERM or SIGINT cleans up the
 * processes it started and exits 0, which is what `monitor()` reports.
 */
import { LAYOUT_VARIABLES, hostPort, readLayout } from './container-env.ts';
import { createControlServer } from './server.ts';

const layout = readLayout(process.env);
const baseEnv: Record<string, string> = {};
for (const [name, value] of Object.entries(process.env)) {
  if (value !== undefined && !(LAYOUT_VARIABLES as readonly string[]).includes(name)) baseEnv[name] = value;
}

const { server, processes } = createControlServer(layout, baseEnv);
server.listen(hostPort(layout, 3000), '127.0.0.1');

let ending = false;
function end(): void {
  if (ending) return;
  ending = true;
  server.close();
  server.closeAllConnections();
  processes.killAll().then(
    () => process.exit(0),
    () => process.exit(1),
  );
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, end);

// A container does not outlive its platform: if the test run that started
// this one dies without stopping it, it ends itself instead of lingering.
const host = process.ppid;
setInterval(() => {
  if (process.ppid !== host) end();
}, 1_000).unref();
