/**
 * A stand-in for workerd's `ctx.container` (the Container API a Durable
 * Object with a `[[containers]]` entry gets), backed by the loopback
 * container host (test/support/container-host.ts), which starts real
 * processes. @cloudflare/containers 0.3.7 uses only these members, and
 * recognises failures by their message text, so those are the platform's:
 *
 * - `running`: true from `start()` until the container's exit is known;
 * - `start({ env })`: synchronous, throws if already running, as workerd's
 *   does; `env` becomes the container's environment;
 * - `monitor()`: resolves on exit code 0, rejects with "container exited with
 *   unexpected exit code: N" otherwise, or with the platform's admission
 *   errors ("there is no container instance that can be provided to this
 *   durable object", "you are requesting too many containers per second")
 *   when the host refuses the start (its `max_instances` or rate limit);
 * - `getTcpPort(p).fetch()`: the container's port p on loopback; "the
 *   container is not listening" while nothing accepts there;
 * - `signal(n)`, `destroy()`: end the container (and all it started).
 *
 * State is kept per Durable Object id at module level, so an object reset
 * (a new instance of the class in this isolate) finds its container still
 * running, as on the platform.
 */
const NO_INSTANCE = 'there is no container instance that can be provided to this durable object';
const RATE_LIMITED = 'you are requesting too many containers per second';
const NOT_LISTENING = 'the container is not listening';
const NOT_RUNNING = 'the container is not running, consider calling start()';

interface Launch {
  instance: string;
  ports: Record<string, number>;
}

interface ContainerRun {
  running: boolean;
  /** The stand-in (one per instance of the Durable Object) whose promises these are. */
  owner: object;
  /** Settles once the host has answered the start: the instance, or the refusal's error. */
  launched: Promise<Launch>;
  /** Settles at the container's end; identity kept so the library's `this.monitor === monitor` checks hold. */
  ended: Promise<void>;
}

const runs = new Map<string, ContainerRun>();

export interface StandInOptions {
  /** Base URL of the container host. */
  hostUrl: string;
  /** The Durable Object's id: the host keys its containers by it. */
  key: string;
}

async function hostJson(url: string, init?: RequestInit): Promise<{ status: number; json: Record<string, unknown> }> {
  const response = await fetch(url, init);
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
}

export function containerStandIn({ hostUrl, key }: StandInOptions) {
  const self = {};
  const current = () => runs.get(key);

  /** The container's end as this stand-in sees it: a fresh long poll for an instance another one started. */
  function watch(run: ContainerRun): Promise<void> {
    const ended = run.launched.then(
      async ({ instance }) => {
        const { json } = await hostJson(`${hostUrl}/instances/${instance}/exit`);
        run.running = false;
        const exitCode = Number(json.exitCode);
        if (exitCode !== 0) throw new Error(`container exited with unexpected exit code: ${exitCode}`);
      },
      (refused: unknown) => {
        run.running = false;
        throw refused;
      },
    );
    // The library attaches its handlers later (or not at all before a retry).
    ended.catch(() => undefined);
    return ended;
  }

  /** `env` is the container's environment (the SDK passes its `envVars`); the rest of workerd's options mean nothing here. */
  function start(options?: { env?: Record<string, string> }): void {
    if (current()?.running) throw new Error('start() cannot be called on a container that is already running.');
    const run: ContainerRun = { running: true, owner: self, launched: Promise.resolve({ instance: '', ports: {} }), ended: Promise.resolve() };
    run.launched = hostJson(`${hostUrl}/instances`, { method: 'POST', body: JSON.stringify({ key, env: options?.env ?? {} }) }).then(({ status, json }) => {
      if (status === 201) return { instance: String(json.instance), ports: json.ports as Record<string, number> };
      throw new Error(json.refusal === 'rate_limited' ? RATE_LIMITED : NO_INSTANCE);
    });
    run.launched.catch(() => undefined);
    run.ended = watch(run);
    runs.set(key, run);
  }

  async function reach(port: number, url: string | URL | Request, init?: RequestInit): Promise<Response> {
    const run = current();
    if (!run) throw new Error(NOT_RUNNING);
    const { instance } = await run.launched;
    const request = new Request(url, init);
    const target = new URL(request.url);
    // Through the host, which connects on loopback and says when nothing listens (see its proxy()).
    const response = await fetch(new Request(`${hostUrl}/instances/${instance}/port/${port}${target.pathname}${target.search}`, request));
    const failure = response.headers.get('x-container-standin');
    if (failure === null) return response;
    await response.body?.cancel();
    if (failure === 'not-running' || !run.running) throw new Error('Network connection lost.');
    throw new Error(NOT_LISTENING);
  }

  async function end(signal: number): Promise<void> {
    const run = current();
    if (!run?.running) return;
    const { instance } = await run.launched.catch(() => ({ instance: '' }));
    if (instance === '') return;
    if (signal === 9) await fetch(`${hostUrl}/instances/${instance}`, { method: 'DELETE' }).then((r) => r.body?.cancel());
    else await fetch(`${hostUrl}/instances/${instance}/signal`, { method: 'POST', body: JSON.stringify({ signal }) }).then((r) => r.body?.cancel());
  }

  return {
    get running(): boolean {
      return current()?.running === true;
    },
    start,
    monitor(): Promise<void> {
      const run = current();
      if (!run) return Promise.reject(new Error(NOT_RUNNING));
      // A new instance of the object (after a reset) watches the same container with promises of its own.
      if (run.owner !== self) {
        run.owner = self;
        run.ended = watch(run);
      }
      return run.ended;
    },
    getTcpPort(port: number) {
      return { fetch: (url: string | URL | Request, init?: RequestInit) => reach(port, url, init) };
    },
    signal(signal: number): void {
      void end(signal).catch(() => undefined);
    },
    async destroy(): Promise<void> {
      await end(9);
      await current()?.ended.catch(() => undefined);
    },
  };
}
