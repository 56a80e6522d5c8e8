/**
 * `npm run bench`: the product against the reference layout on the real local
 * stack (runner + workerd under `wrangler dev`), with the raw limits of the
 * same machine. Writes bench/results/latest.{json,md,svg} and the results
 * section of bench/README.md. `BENCH_SCALE=0.1` runs a quick, smaller pass
 * (written to bench/tmp/results/ instead); `VERBOSE=1` shows the runner's and
 * wrangler's output.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { figures, limitLines, notes, type Measurements, type MemoryPoint } from './figures.ts';
import { isolateHeap } from './inspector.ts';
import { describeMachine, machineLine } from './machine.ts';
import { peers, waitTerminal, type Peer, type PeerName } from './peers.ts';
import { fmt, markdownReport, svgChart } from './report.ts';
import WebSocket from 'ws';
import { liveRun, measureLimits, medianRun, replay, type Load, type ReplayResult, type RunResult } from './scenarios.ts';
import { residentBytes, startBenchStack, type BenchStack } from './stack.ts';

const SCALE = Number(process.env.BENCH_SCALE ?? '1');
if (!(SCALE > 0 && SCALE <= 1)) throw new Error('BENCH_SCALE must be in (0, 1].');
const scaled = (count: number) => Math.max(200, Math.round(count * SCALE));

const CONFIG = {
  scale: SCALE,
  /** The demo's default delta size: a token or two. */
  chunkBytes: 6,
  /** delayMs 5 ≈ 200 chunks/s, a fast model's token pace (the measured pace is reported). */
  paceDelayMs: 5,
  pacedChunks: scaled(2_000),
  latencyChunks: scaled(1_000),
  smallRunChunks: scaled(1_000),
  fullSpeedChunks: scaled(100_000),
  oneClientChunks: scaled(20_000),
  replayCounts: [scaled(10_000), scaled(100_000)],
  repetitions: 3,
  /** Ours and the pipe are repeated and the median run kept; the reference's long runs run once. */
  peerRepetitions: 3,
  limitRows: scaled(100_000),
  limitMessages: scaled(100_000),
  memoryPauseMs: 1_000,
  /** MAX_CLIENTS_PER_RUN's default: the most sockets one run accepts. */
  idleClients: 200,
  /** The Claude Code double's long answer (characters), in 20-character deltas. */
  claudeAnswerChars: 20_000,
};

// A scaled-down pass is not comparable with the targets: it never replaces the published results.
const OUT = fileURLToPath(new URL(SCALE < 1 ? './tmp/results/' : './results/', import.meta.url));
const README = fileURLToPath(new URL('./README.md', import.meta.url));
const README_START = '<!-- bench:results:start -->';
const README_END = '<!-- bench:results:end -->';
const MiB = 2 ** 20;

const log = (line: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function describe(result: RunResult): string {
  const parts = [`${result.events} events`, `${fmt(result.chunksPerSecond)} chunks/s`, `${fmt(result.rowsPerChunk)} rows/chunk`];
  if (result.latency) parts.push(`latency p50 ${fmt(result.latency.p50)} ms p99 ${fmt(result.latency.p99)} ms (${result.latency.samples} samples)`);
  if (result.deliveredPerSecond !== null) parts.push(`${fmt(result.deliveredPerSecond)} frames/s delivered`);
  if (result.incompleteClients > 0) parts.push(`${result.incompleteClients} INCOMPLETE clients`);
  return `${result.peer}, ${result.clients} client(s): ${parts.join(', ')}`;
}

async function run(peer: Peer, load: Load, clients: number): Promise<RunResult> {
  const result = await liveRun(peer, load, clients);
  log(describe(result));
  return result;
}

/** Ours and the pipe `peerRepetitions` times, the reference once; the run with the median `key`. */
async function repeated(peer: Peer, load: Load, clients: number, key: (r: RunResult) => number, first: RunResult[] = []): Promise<RunResult> {
  const results = [...first];
  const times = peer.name === 'reference' ? 1 : CONFIG.peerRepetitions;
  while (results.length < times) results.push(await run(peer, load, clients));
  return medianRun(results, key);
}

/**
 * workerd's RSS before and after `count` WebSockets attach to one live run
 * and go quiet. The run is stalled (`stallAt: 0`), so nothing is sent; under
 * `wrangler dev` its pump's pending fetch keeps the object in memory, so this
 * is the cost of the sockets themselves, an upper bound of a hibernated run's.
 */
async function idleSockets(stack: BenchStack, count: number): Promise<{ before: number; after: number }> {
  const { ours } = peers(stack.url);
  const runId = await ours.start({ prompt: 'idle', harnessOptions: { chunks: 1, delayMs: 0, stallAt: 0 } });
  await sleep(CONFIG.memoryPauseMs);
  const before = residentBytes(stack.workerdPids());
  const sockets = await Promise.all(
    Array.from({ length: count }, () => new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(ours.wsUrl(runId, -1));
      ws.on('open', () => resolve(ws));
      ws.on('error', reject);
    })),
  );
  await sleep(5 * CONFIG.memoryPauseMs);
  const after = residentBytes(stack.workerdPids());
  for (const ws of sockets) ws.terminate();
  await fetch(`${stack.url}/runs/${runId}/cancel`, { method: 'POST' });
  return { before, after };
}

async function memoryPoint(stack: BenchStack): Promise<MemoryPoint> {
  await sleep(CONFIG.memoryPauseMs);
  const heap = await isolateHeap(stack.inspectorUrl, `${stack.url}/health`);
  return { rss: residentBytes(stack.workerdPids()), heap: heap.usedBytes, collected: heap.collected };
}

async function measure(stack: BenchStack): Promise<Measurements> {
  const { ours, reference, pipe } = peers(stack.url);
  const fullSpeed = (chunks: number): Load => ({ chunks, delayMs: 0, chunkBytes: CONFIG.chunkBytes });
  const paced = (chunks: number): Load => ({ chunks, delayMs: CONFIG.paceDelayMs, chunkBytes: CONFIG.chunkBytes });
  const ingest = (x: RunResult) => x.chunksPerSecond;
  const delivered = (x: RunResult) => x.deliveredPerSecond ?? 0;
  const p99 = (x: RunResult) => x.latency?.p99 ?? Number.POSITIVE_INFINITY;

  log('warm-up (JIT, first objects)');
  for (const peer of [ours, reference, pipe]) await liveRun(peer, fullSpeed(200), 1);

  log('raw limits');
  const limits = await measureLimits(stack.url, CONFIG.limitRows, CONFIG.limitMessages, CONFIG.chunkBytes, CONFIG.repetitions);
  log(`SQLite ${fmt(limits.sqliteInsertsPerSecond)} inserts/s in one transaction; WebSocket ${fmt(limits.wsMessagesPerSecond)} messages/s`);
  const wsBase = stack.url.replace(/^http/, 'ws');
  const rawReplay: ReplayResult[] = [];
  for (const count of CONFIG.replayCounts) {
    const result = await replay((fromSeq) => `${wsBase}/bench/limits/replay?fromSeq=${fromSeq}`, CONFIG.limitRows - 1, count, CONFIG.repetitions);
    log(`raw replay of ${count}: ${fmt(result.seconds * 1000)} ms`);
    rawReplay.push(result);
  }

  log('full speed, no client; memory after a small and a large run (fresh object each)');
  // The first large run warms workerd's allocator for both peers' memory figures, and is the object replayed from.
  const oursRuns = [await run(ours, fullSpeed(CONFIG.fullSpeedChunks), 0)];
  const memory = {} as Measurements['memory'];
  await run(reference, fullSpeed(CONFIG.smallRunChunks), 0);
  const referenceSmall = await memoryPoint(stack);
  const referenceLarge = await run(reference, fullSpeed(CONFIG.fullSpeedChunks), 0);
  memory.reference = { small: referenceSmall, large: await memoryPoint(stack) };
  await run(ours, fullSpeed(CONFIG.smallRunChunks), 0);
  const oursSmall = await memoryPoint(stack);
  const runnerSmall = residentBytes([stack.runnerPid]);
  oursRuns.push(await run(ours, fullSpeed(CONFIG.fullSpeedChunks), 0));
  memory.ours = { small: oursSmall, large: await memoryPoint(stack) };
  const runner = { small: runnerSmall, large: residentBytes([stack.runnerPid]) };
  log(`runner RSS after a ${CONFIG.smallRunChunks}-delta run ${fmt(runner.small / MiB)} MiB, after a ${CONFIG.fullSpeedChunks}-delta run ${fmt(runner.large / MiB)} MiB`);
  for (const peer of ['ours', 'reference'] as const) {
    const { small, large } = memory[peer];
    log(`${peer}: heap ${fmt(small.heap / MiB)} → ${fmt(large.heap / MiB)} MiB, workerd RSS ${fmt(small.rss / MiB)} → ${fmt(large.rss / MiB)} MiB`);
  }
  const large: Record<PeerName, RunResult> = {
    ours: await repeated(ours, fullSpeed(CONFIG.fullSpeedChunks), 0, ingest, oursRuns),
    reference: referenceLarge,
    pipe: await repeated(pipe, fullSpeed(CONFIG.fullSpeedChunks), 0, ingest),
  };

  log('replay to a new client');
  const sources = { ours: oursRuns[0]!, reference: referenceLarge };
  const replays = { ours: [], reference: [] } as Measurements['replays'];
  for (const peer of [ours, reference]) {
    const source = sources[peer.name as 'ours' | 'reference'];
    for (const count of CONFIG.replayCounts) {
      const rowsRead = async () => (await peer.stats(source.runId)).rowsRead;
      const result = await replay((fromSeq) => peer.wsUrl(source.runId, fromSeq), source.stats.lastSeq, count, CONFIG.repetitions, rowsRead);
      log(`${peer.name} replay of ${count}: ${fmt(result.seconds * 1000)} ms, ${fmt(result.rowsReadPerEvent)} rows read/event${result.incomplete ? ` (${result.incomplete} INCOMPLETE)` : ''}`);
      replays[peer.name as 'ours' | 'reference'].push(result);
    }
  }

  log('full speed, one client');
  const oneClient = {} as Record<PeerName, RunResult>;
  for (const peer of [ours, reference, pipe]) oneClient[peer.name] = await repeated(peer, fullSpeed(CONFIG.oneClientChunks), 1, delivered);

  log(`token pace (delayMs ${CONFIG.paceDelayMs})`);
  const pacedRuns: Measurements['paced'] = { '0': {}, '1': {}, '10': {}, '100': {} };
  for (const peer of [ours, reference]) pacedRuns['0'][peer.name] = await run(peer, paced(CONFIG.pacedChunks), 0);
  for (const [clients, chunks] of [['10', CONFIG.pacedChunks], ['1', CONFIG.latencyChunks], ['100', CONFIG.latencyChunks]] as const) {
    for (const peer of [ours, reference, pipe]) pacedRuns[clients][peer.name] = await repeated(peer, paced(chunks), Number(clients), p99);
  }

  log(`${CONFIG.idleClients} idle sockets on one run`);
  const idle = await idleSockets(stack, CONFIG.idleClients);
  log(`workerd RSS ${fmt(idle.before / MiB)} → ${fmt(idle.after / MiB)} MiB with ${CONFIG.idleClients} idle sockets`);

  log(`the claude-code harness (the Claude Code double), a ${CONFIG.claudeAnswerChars}-character answer`);
  const claudeRunId = await ours.start({ prompt: `[scenario:long ${CONFIG.claudeAnswerChars}] write it out`, harness: 'claude-code' });
  const claude = await waitTerminal(ours, claudeRunId);
  if (claude.status !== 'completed') throw new Error(`the claude-code double's run ended ${claude.status}`);
  log(`claude-code: ${claude.lastSeq + 1} chunks, ${fmt(claude.databaseSize / (claude.lastSeq + 1))} stored bytes per chunk`);

  return { config: CONFIG, limits, rawReplay, large, oneClient, paced: pacedRuns, replays, memory, runner, idle, claude: { events: claude.lastSeq + 1, databaseSize: claude.databaseSize, payloadBytes: claude.payloadBytes } };
}

const machine = describeMachine();
log(machineLine(machine));
log(`config ${JSON.stringify(CONFIG)}`);
const stack = await startBenchStack(process.env.VERBOSE ? (line) => console.log(line) : undefined);
log(`stack up: worker ${stack.url}, runner ${stack.runnerUrl}, workerd pids ${stack.workerdPids().join(', ')}`);
const started = Date.now();
let measurements: Measurements;
try {
  measurements = await measure(stack);
} finally {
  await stack.close();
}

const generatedAt = new Date().toISOString();
const table = figures(measurements);
const md = markdownReport(table, limitLines(measurements), machine, generatedAt, notes(measurements, machine));
const durationSeconds = Math.round((Date.now() - started) / 1000);
mkdirSync(OUT, { recursive: true });
writeFileSync(`${OUT}latest.json`, `${JSON.stringify({ generatedAt, durationSeconds, machine, config: CONFIG, figures: table, measurements }, null, 2)}\n`);
writeFileSync(`${OUT}latest.md`, md);
writeFileSync(`${OUT}latest.svg`, svgChart(table.filter((f) => f.id !== 'ingest_vs_sqlite'), `harness-relay vs the reference layout (${generatedAt.slice(0, 10)}, ${machine.cores} cores)`));
if (SCALE === 1 && existsSync(README)) {
  const text = readFileSync(README, 'utf8');
  const a = text.indexOf(README_START);
  const b = text.indexOf(README_END);
  if (a !== -1 && b > a) writeFileSync(README, `${text.slice(0, a + README_START.length)}\n${md}${text.slice(b)}`);
}
console.log(`\n${md}`);
log(
  SCALE < 1
    ? `done in ${durationSeconds} s: bench/tmp/results/latest.{json,md,svg} (BENCH_SCALE=${SCALE}: not comparable with the targets; the published results are untouched)`
    : `done in ${durationSeconds} s: bench/results/latest.{json,md,svg} and bench/README.md`,
);
