import { burst, median, now, openTail, percentile, type TailClient } from './clients.ts';
import type { PeerStats } from './peer-stats.ts';
import { waitTerminal, type Peer } from './peers.ts';

/** Demo-harness load: `chunks` text deltas of `chunkBytes`, `delayMs` apart (0: as fast as the pipe takes them). */
export interface Load {
  chunks: number;
  delayMs: number;
  chunkBytes: number;
}

export interface LatencySummary {
  samples: number;
  p50: number;
  p99: number;
  max: number;
}

export interface RunResult {
  peer: string;
  runId: string;
  load: Load;
  clients: number;
  stats: PeerStats;
  /** Events stored (`lastSeq + 1`). */
  events: number;
  /** From the harness's stamp on seq 0 to the run made terminal by the peer. */
  ingestSeconds: number;
  chunksPerSecond: number;
  /** (rows written + alarms set) / events, the run's thread object included. */
  rowsPerChunk: number;
  /** The run object alone (without its thread). */
  runObjectRowsPerChunk: number;
  bytesPerChunk: number;
  latency: LatencySummary | null;
  /** Per client: events received / (last frame − harness stamp on seq 0). */
  deliveredPerSecond: number | null;
  /** Clients that missed a seq, saw one twice, or got no status frame. */
  incompleteClients: number;
}

function summarize(values: number[]): LatencySummary | null {
  if (values.length === 0) return null;
  const sorted = values.sort((a, b) => a - b);
  return { samples: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1]! };
}

/** The run of `results` with the median `key` (the middle one of an odd count). */
export function medianRun(results: readonly RunResult[], key: (r: RunResult) => number): RunResult {
  return [...results].sort((a, b) => key(a) - key(b))[Math.floor((results.length - 1) / 2)]!;
}

/** Margin after the last client attached before latency samples count: the backlog replay is over by then. */
const LATENCY_SETTLE_MS = 100;

/**
 * One run of `load` on `peer` with `clients` live tails attached right after
 * the run is created. Latency counts chunks stamped once every client was
 * attached (and a short margin), so replayed backlog never counts as live.
 */
export async function liveRun(peer: Peer, load: Load, clients: number, timeoutMs = 600_000): Promise<RunResult> {
  const runId = await peer.start({ prompt: 'bench', harnessOptions: { chunks: load.chunks, delayMs: load.delayMs, chunkBytes: load.chunkBytes } });
  let latencyFrom = Number.POSITIVE_INFINITY;
  const tails: TailClient[] = await Promise.all(
    Array.from({ length: clients }, () => openTail(peer.wsUrl(runId, -1), { latencyFrom: () => latencyFrom, timeoutMs })),
  );
  latencyFrom = Date.now() + LATENCY_SETTLE_MS;
  // With clients, their status frames say when the run is over: no polling of the peer while it works.
  await Promise.all(tails.map((tail) => tail.done));
  const stats = await waitTerminal(peer, runId, timeoutMs);
  const events = stats.lastSeq + 1;
  const ingestSeconds = stats.firstTimestamp !== null && stats.finishedAt !== null ? (stats.finishedAt - stats.firstTimestamp) / 1000 : NaN;
  const full = peer.name !== 'pipe';
  const delivered = tails.filter((t) => t.events > 0 && stats.firstTimestamp !== null).map((t) => t.events / ((t.lastAt - stats.firstTimestamp!) / 1000));
  return {
    peer: peer.name,
    runId,
    load,
    clients,
    stats,
    events,
    ingestSeconds,
    chunksPerSecond: events / ingestSeconds,
    rowsPerChunk: (stats.rowsWritten + stats.alarmsSet + (stats.thread ? stats.thread.rowsWritten + stats.thread.alarmsSet : 0)) / events,
    runObjectRowsPerChunk: (stats.rowsWritten + stats.alarmsSet) / events,
    bytesPerChunk: stats.databaseSize / events,
    latency: summarize(tails.flatMap((t) => t.latencies)),
    deliveredPerSecond: delivered.length > 0 ? median(delivered) : null,
    // The pipe does not replay: a client sees the frames from when it attached.
    incompleteClients: tails.filter((t) => t.statusAt === 0 || t.outOfOrder > 0 || (full && t.events !== events)).length,
  };
}

export interface ReplayResult {
  events: number;
  /** Storage rows read per replayed event (from the peer's counters), when the peer counts them. */
  rowsReadPerEvent: number | null;
  /** Median of the repetitions: from opening the socket to the status frame. */
  seconds: number;
  all: number[];
  incomplete: number;
}

/** A new client asks for the last `count` events of a finished run; timed from `new WebSocket` to its status frame. */
export async function replay(
  url: (fromSeq: number) => string,
  lastSeq: number,
  count: number,
  repetitions: number,
  rowsRead?: () => Promise<number>,
): Promise<ReplayResult> {
  const all: number[] = [];
  let incomplete = 0;
  const readBefore = rowsRead ? await rowsRead() : 0;
  for (let i = 0; i < repetitions; i++) {
    const started = now();
    const tail = await openTail(url(lastSeq - count));
    await tail.done;
    if (tail.statusAt === 0 || tail.events !== count || tail.outOfOrder > 0) incomplete++;
    all.push((tail.statusAt - started) / 1000);
  }
  const rowsReadPerEvent = rowsRead ? ((await rowsRead()) - readBefore) / (count * repetitions) : null;
  return { events: count, rowsReadPerEvent, seconds: median(all), all, incomplete };
}

export interface Limits {
  sqliteInsertsPerSecond: number;
  sqliteRows: number;
  sqliteRowsWrittenPerInsert: number;
  wsMessagesPerSecond: number;
  wsMessages: number;
}

async function timed<T>(action: () => Promise<T>): Promise<{ seconds: number; value: T }> {
  const started = now();
  const value = await action();
  return { seconds: (now() - started) / 1000, value };
}

async function postJson<T>(url: string): Promise<T> {
  const res = await fetch(url, { method: 'POST' });
  if (!res.ok) throw new Error(`POST ${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as T;
}

/**
 * The raw limits: `rows` single-chunk inserts in one SQLite transaction (the
 * round trip of an empty insert subtracted), and `messages` WebSocket frames
 * of the run's frame size sent back to back to one client on loopback.
 * Leaves `rows` rows in the limits object's table for the raw replay.
 */
export async function measureLimits(base: string, rows: number, messages: number, chunkBytes: number, repetitions: number): Promise<Limits> {
  const empty: number[] = [];
  const full: number[] = [];
  let rowsWritten = 0;
  for (let i = 0; i < repetitions; i++) {
    await postJson(`${base}/bench/limits/sqlite/reset`);
    empty.push((await timed(() => postJson(`${base}/bench/limits/sqlite/insert?n=0&deltaBytes=${chunkBytes}`))).seconds);
    await postJson(`${base}/bench/limits/sqlite/reset`);
    const run = await timed(() => postJson<{ rowsWritten: number }>(`${base}/bench/limits/sqlite/insert?n=${rows}&deltaBytes=${chunkBytes}`));
    full.push(run.seconds);
    rowsWritten = run.value.rowsWritten;
  }
  const wsUrl = `${base.replace(/^http/, 'ws')}/bench/limits/ws`;
  const bursts: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    const { seconds, received } = await burst(wsUrl, messages, chunkBytes);
    if (received !== messages) throw new Error(`the WebSocket burst delivered ${received} of ${messages} frames`);
    bursts.push(seconds);
  }
  return {
    sqliteInsertsPerSecond: rows / (median(full) - median(empty)),
    sqliteRows: rows,
    sqliteRowsWrittenPerInsert: rowsWritten / rows,
    wsMessagesPerSecond: messages / median(bursts),
    wsMessages: messages,
  };
}
