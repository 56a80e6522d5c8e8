import type { PeerStats } from './peer-stats.ts';

/**
 * The three peers the bench drives through the same runner and the same
 * demo-harness load: the product (its real HTTP API), the reference layout
 * and the storage-free pipe (bench routes).
 */
export type PeerName = 'ours' | 'reference' | 'pipe';

export interface Peer {
  name: PeerName;
  start(body: unknown): Promise<string>;
  wsUrl(runId: string, fromSeq: number): string;
  stats(runId: string): Promise<PeerStats>;
}

async function post(url: string, body: unknown): Promise<string> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 202) throw new Error(`POST ${url} answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { runId: string }).runId;
}

async function getStats(url: string): Promise<PeerStats> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url} answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as PeerStats;
}

export function peers(base: string): Record<PeerName, Peer> {
  const ws = base.replace(/^http/, 'ws');
  const benchPeer = (name: PeerName, path: string): Peer => ({
    name,
    start: (body) => post(`${base}/bench/${path}/runs`, body),
    wsUrl: (runId, fromSeq) => `${ws}/bench/${path}/runs/${runId}/ws?fromSeq=${fromSeq}`,
    stats: (runId) => getStats(`${base}/bench/${path}/runs/${runId}/stats`),
  });
  return {
    ours: {
      name: 'ours',
      start: (body) => post(`${base}/runs`, body),
      wsUrl: (runId, fromSeq) => `${ws}/runs/${runId}/ws?fromSeq=${fromSeq}`,
      stats: (runId) => getStats(`${base}/bench/ours/runs/${runId}/stats`),
    },
    reference: benchPeer('reference', 'baseline'),
    pipe: benchPeer('pipe', 'pipe'),
  };
}

/** The figures are timed inside the peers, not by the poll: polling slower only disturbs the run less. */
const POLL_MS = 250;
/** After the run is terminal its objects may still write (the thread is told the run ended): wait until writes stop. */
const SETTLE_POLL_MS = 250;
const SETTLE_MAX_MS = 5_000;

function rowsOf(stats: PeerStats): number {
  return stats.rowsWritten + stats.alarmsSet + (stats.thread ? stats.thread.rowsWritten + stats.thread.alarmsSet : 0);
}

/** Polls until the run is terminal and its objects have stopped writing. */
export async function waitTerminal(peer: Peer, runId: string, timeoutMs = 600_000): Promise<PeerStats> {
  const deadline = Date.now() + timeoutMs;
  let stats = await peer.stats(runId);
  while (!stats.terminal) {
    if (Date.now() > deadline) throw new Error(`${peer.name} run ${runId} was still ${stats.status} after ${timeoutMs / 1000} s (last seq ${stats.lastSeq})`);
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    stats = await peer.stats(runId);
  }
  const settleBy = Date.now() + SETTLE_MAX_MS;
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, SETTLE_POLL_MS));
    const next = await peer.stats(runId);
    if (rowsOf(next) === rowsOf(stats) || Date.now() > settleBy) return next;
    stats = next;
  }
}
