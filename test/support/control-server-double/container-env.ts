/**
 * What makes this machine look like one container to the processes the
 * double starts. A real container has its own network namespace and its own
 * filesystem; here every container shares the host's, so the stand-in gives
 * each one free loopback ports and a scratch directory, and this module
 * translates the container's view (ports 3000 and 8788, `/workspace`, the
 * image's `/opt/harness-relay`) into the host's.
 */
export interface ContainerLayout {
  /** Container port → the loopback port the host reserved for it. */
  ports: ReadonlyMap<number, number>;
  /** Container path prefix → host directory (longest prefix wins). */
  paths: ReadonlyArray<readonly [string, string]>;
}

/** The variables the stand-in uses to describe a container to its double; never passed on to processes. */
export const LAYOUT_VARIABLES = ['CONTAINER_PORT_MAP', 'CONTAINER_PATH_MAP'] as const;

function parseObject(raw: string | undefined, name: string): Record<string, unknown> {
  if (raw === undefined) throw new Error(`${name} is not set: the container stand-in passes it to the control-server double`);
  const value: unknown = JSON.parse(raw);
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${name} must be a JSON object`);
  return value as Record<string, unknown>;
}

export function readLayout(env: NodeJS.ProcessEnv): ContainerLayout {
  const ports = new Map<number, number>();
  for (const [inside, outside] of Object.entries(parseObject(env.CONTAINER_PORT_MAP, 'CONTAINER_PORT_MAP'))) {
    if (typeof outside !== 'number' || !Number.isInteger(outside)) throw new Error(`CONTAINER_PORT_MAP[${inside}] must be a port number`);
    ports.set(Number(inside), outside);
  }
  const paths: Array<readonly [string, string]> = [];
  for (const [inside, outside] of Object.entries(parseObject(env.CONTAINER_PATH_MAP, 'CONTAINER_PATH_MAP'))) {
    if (typeof outside !== 'string') throw new Error(`CONTAINER_PATH_MAP[${inside}] must be a directory`);
    paths.push([inside, outside]);
  }
  paths.sort((a, b) => b[0].length - a[0].length);
  return { ports, paths };
}

/** The host port behind a container port; a port the container does not publish stays as is (and refuses). */
export function hostPort(layout: ContainerLayout, port: number): number {
  return layout.ports.get(port) ?? port;
}

/** Rewrites container paths at the start of a word (`node /opt/harness-relay/…`, `cd /workspace`). */
export function hostPaths(layout: ContainerLayout, text: string): string {
  let out = text;
  for (const [inside, outside] of layout.paths) {
    out = out.replace(new RegExp(`(^|[\\s='"])${escape(inside)}(?=/|$|[\\s'"])`, 'g'), (_match, lead: string) => `${lead}${outside}`);
  }
  return out;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The environment a started process sees, rewritten for the shared host:
 * a `*_PORT` variable naming a published container port gets its host port
 * (the process binds what the platform would map), a `*_HOST` of 0.0.0.0
 * becomes loopback (nothing of a test container listens beyond this
 * machine), and container paths become host paths.
 */
export function hostEnv(layout: ContainerLayout, env: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (/(^|_)PORT$/.test(name) && /^\d+$/.test(value) && layout.ports.has(Number(value))) out[name] = String(hostPort(layout, Number(value)));
    else if (/(^|_)HOST$/.test(name) && value === '0.0.0.0') out[name] = '127.0.0.1';
    else out[name] = hostPaths(layout, value);
  }
  return out;
}
