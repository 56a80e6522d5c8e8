import WebSocket from 'ws';

/**
 * Tail clients for the bench: a `ws` socket that counts event frames, notes
 * when each arrived, and (for live runs) how long after the harness stamped
 * its chunk. The harness runs on this machine, so its `timestamp` and our
 * clock are the same clock.
 */
export interface TailClient {
  /** Event frames received. */
  events: number;
  /** The last seq received, -1 before any. */
  lastSeq: number;
  /** Seqs that did not follow the previous one (a gap or a duplicate). */
  outOfOrder: number;
  /** Receive time − chunk timestamp (ms), for chunks stamped at or after `latencyFrom`. */
  latencies: number[];
  /** When the first / last event frame arrived (epoch ms, fractional). */
  firstAt: number;
  lastAt: number;
  /** When the terminal status frame arrived; 0 while the run is live. */
  statusAt: number;
  /** Resolves on the status frame (or when the socket closes or fails). */
  done: Promise<void>;
  close(): void;
}

export interface TailOptions {
  /** Measure latency only for chunks the harness stamped from this epoch ms on. Default: no latency. */
  latencyFrom?: () => number;
  timeoutMs?: number;
}

export const now = () => performance.timeOrigin + performance.now();

const SEQ_PREFIX = '{"seq":';
const TIMESTAMP_FIELD = '"timestamp":';

/**
 * Reads the seq and the chunk's `timestamp` without parsing the whole frame:
 * with 100 clients this process reads ~20,000 frames a second on a machine it
 * shares with workerd, so the client's cost shows up in the latency it measures.
 * Event frames are `{"seq":N,"id":"N","chunk":{…}}` (protocol `eventFrameJson`);
 * a chunk the demo harness wrote ends with its `timestamp`.
 */
export function readFrame(text: string): { status: boolean; seq: number | null; timestamp: number | null } {
  if (!text.startsWith(SEQ_PREFIX)) {
    const status = (JSON.parse(text) as { type?: unknown }).type === 'status';
    return { status, seq: null, timestamp: null };
  }
  const seq = Number.parseInt(text.slice(SEQ_PREFIX.length, SEQ_PREFIX.length + 12), 10);
  const at = text.lastIndexOf(TIMESTAMP_FIELD);
  const timestamp = at === -1 ? NaN : Number.parseInt(text.slice(at + TIMESTAMP_FIELD.length, at + TIMESTAMP_FIELD.length + 20), 10);
  return { status: false, seq: Number.isSafeInteger(seq) ? seq : null, timestamp: Number.isFinite(timestamp) ? timestamp : null };
}

/** Opens a tail; resolves once the socket is open. */
export function openTail(url: string, options: TailOptions = {}): Promise<TailClient> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  let settle!: () => void;
  const client: TailClient = {
    events: 0,
    lastSeq: -1,
    outOfOrder: 0,
    latencies: [],
    firstAt: 0,
    lastAt: 0,
    statusAt: 0,
    done: new Promise<void>((resolve) => (settle = resolve)),
    close: () => ws.terminate(),
  };
  const timer = setTimeout(() => {
    ws.terminate();
    settle();
  }, options.timeoutMs ?? 600_000);
  const finish = () => {
    clearTimeout(timer);
    settle();
  };
  ws.on('message', (data) => {
    const at = now();
    const frame = readFrame(String(data));
    if (frame.status) {
      client.statusAt = at;
      // wrangler dev's proxy holds a closed connection open for seconds: stop here.
      ws.terminate();
      finish();
      return;
    }
    if (frame.seq === null) return;
    if (client.events === 0) client.firstAt = at;
    else if (frame.seq !== client.lastSeq + 1) client.outOfOrder++;
    client.events++;
    client.lastSeq = frame.seq;
    client.lastAt = at;
    const stamp = frame.timestamp;
    if (options.latencyFrom && stamp !== null && stamp >= options.latencyFrom()) client.latencies.push(at - stamp);
  });
  ws.on('close', finish);
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', (error) => {
      finish();
      reject(error);
    });
  });
}

/** Asks the limits object for `n` frames back to back; resolves with the seconds from request to the last one. */
export async function burst(url: string, n: number, deltaBytes: number): Promise<{ seconds: number; received: number }> {
  const ws = new WebSocket(url, { perMessageDeflate: false });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  let received = 0;
  const started = now();
  const seconds = await new Promise<number>((resolve, reject) => {
    ws.on('message', (data) => {
      // Read like a tail client reads frames, so the limit includes the same client-side work.
      if (readFrame(String(data)).status) resolve((now() - started) / 1000);
      else received++;
    });
    ws.once('close', () => reject(new Error('the burst socket closed early')));
    ws.send(JSON.stringify({ burst: n, deltaBytes }));
  });
  ws.terminate();
  return { seconds, received };
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

export function median(values: readonly number[]): number {
  return percentile([...values].sort((a, b) => a - b), 50);
}
