import WebSocket from 'ws';

/**
 * A minimal Chrome DevTools protocol client for wrangler's inspector: the
 * bench uses it to collect garbage in the Worker's isolate and read its heap
 * before taking a memory figure, so the figure is what objects hold, not
 * garbage V8 has not collected yet.
 */
export interface HeapUsage {
  usedBytes: number;
  totalBytes: number;
}

/** How long a garbage collection may take before the figure is taken without it. */
const GC_TIMEOUT_MS = 10_000;

/**
 * Collects garbage (twice) and reads the isolate's heap. workerd answers
 * `collectGarbage` only when the isolate next runs, so the Worker is poked
 * (`pokeUrl`) until it has.
 */
export async function isolateHeap(inspectorUrl: string, pokeUrl: string): Promise<HeapUsage & { collected: boolean }> {
  const targets = (await (await fetch(`${inspectorUrl}/json`)).json()) as { webSocketDebuggerUrl?: string }[];
  const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (!url) throw new Error(`no inspector target at ${inspectorUrl}/json`);
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let id = 0;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  ws.on('message', (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id!);
    if (message.error) waiter.reject(new Error(message.error.message));
    else waiter.resolve(message.result);
  });
  const call = <T>(method: string) =>
    new Promise<T>((resolve, reject) => {
      const callId = ++id;
      pending.set(callId, { resolve: resolve as (value: unknown) => void, reject });
      ws.send(JSON.stringify({ id: callId, method }));
    });
  const collect = async () => {
    let done = false;
    const gc = call('HeapProfiler.collectGarbage').then(() => (done = true));
    const deadline = Date.now() + GC_TIMEOUT_MS;
    while (!done && Date.now() < deadline) {
      await fetch(pokeUrl).then((res) => res.body?.cancel(), () => undefined);
      await Promise.race([gc, new Promise((resolve) => setTimeout(resolve, 50))]);
    }
    return done;
  };
  try {
    // Twice: the first pass can leave objects whose finalizers free more.
    const collected = (await collect()) && (await collect());
    const usage = await call<{ usedSize: number; totalSize: number }>('Runtime.getHeapUsage');
    return { usedBytes: usage.usedSize, totalBytes: usage.totalSize, collected };
  } finally {
    ws.terminate();
  }
}
