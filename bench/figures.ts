import type { Machine } from './machine.ts';
import type { PeerName } from './peers.ts';
import { figure, fmt, type Figure, type LimitLine } from './report.ts';
import type { Limits, ReplayResult, RunResult } from './scenarios.ts';

/** Everything one bench run measured; `figures()` turns it into the table. */
export interface Measurements {
  config: {
    chunkBytes: number;
    paceDelayMs: number;
    fullSpeedChunks: number;
    smallRunChunks: number;
    oneClientChunks: number;
    replayCounts: number[];
    repetitions: number;
    idleClients?: number;
    claudeAnswerChars?: number;
  };
  limits: Limits;
  rawReplay: ReplayResult[];
  /** Full speed, no client (ours and the pipe: the median of repeated runs). */
  large: Record<PeerName, RunResult>;
  /** Full speed, one client. */
  oneClient: Record<PeerName, RunResult>;
  /** Token pace, by number of clients. */
  paced: Record<'0' | '1' | '10' | '100', Partial<Record<PeerName, RunResult>>>;
  replays: Record<'ours' | 'reference', ReplayResult[]>;
  memory: Record<'ours' | 'reference', { small: MemoryPoint; large: MemoryPoint }>;
  /** The runner process's VmRSS after ours' small and large runs, bytes. */
  runner?: { small: number; large: number };
  /** workerd's VmRSS before and after `idleClients` quiet sockets attached to one run, bytes. */
  idle?: { before: number; after: number };
  /** The claude-code harness's long answer, through the Claude Code double. */
  claude?: { events: number; databaseSize: number; payloadBytes: number | null };
}

export interface MemoryPoint {
  /** VmRSS of the workerd processes, bytes. */
  rss: number;
  /** The Worker isolate's JS heap in use after garbage collection, bytes. */
  heap: number;
  collected: boolean;
}

const MiB = 2 ** 20;
const LATENCY_BOUNDS_MS: Record<string, number> = { '10': 50, '100': 100 };

export function figures(m: Measurements): Figure[] {
  const o = m.large.ours;
  const r = m.large.reference;
  const out: Figure[] = [];
  const ingestRatio = o.chunksPerSecond / r.chunksPerSecond;
  out.push(
    figure({
      id: 'ingest',
      label: '(a) Ingest, one run, no client',
      unit: 'chunks/s',
      better: 'higher',
      ours: o.chunksPerSecond,
      reference: r.chunksPerSecond,
      limit: m.large.pipe.chunksPerSecond,
      limitLabel: 'storage-free pipe',
      target: '≥ 50× reference',
      met: ingestRatio >= 50,
      note: `${m.config.fullSpeedChunks} deltas at full speed: events ÷ (run terminal − harness stamp on seq 0)`,
    }),
    figure({
      id: 'ingest_vs_sqlite',
      label: '(a) Ingest vs a row-per-chunk ceiling',
      unit: 'chunks/s',
      better: 'higher',
      ours: o.chunksPerSecond,
      reference: r.chunksPerSecond,
      limit: m.limits.sqliteInsertsPerSecond,
      limitLabel: 'SQLite inserts/s, one txn',
      target: null,
      met: null,
      note: 'the same run against the raw SQLite insert rate (one chunk per row)',
    }),
  );
  const one = m.oneClient;
  const deliveredFraction = (one.ours.deliveredPerSecond ?? NaN) / m.limits.wsMessagesPerSecond;
  out.push(
    figure({
      id: 'one_client_rate',
      label: '(a) Full-speed run, one client: frames delivered',
      unit: 'frames/s',
      better: 'higher',
      ours: one.ours.deliveredPerSecond ?? NaN,
      reference: one.reference.deliveredPerSecond,
      limit: m.limits.wsMessagesPerSecond,
      limitLabel: 'raw WebSocket msgs/s',
      target: '≥ 50% of raw',
      met: deliveredFraction >= 0.5,
      note: `${m.config.oneClientChunks} deltas: frames received ÷ (last frame − harness stamp on seq 0)`,
    }),
  );
  const rows = (id: string, label: string, ours: RunResult, ref: RunResult, bound: number) =>
    figure({
      id,
      label,
      unit: 'rows/chunk',
      better: 'lower',
      ours: ours.rowsPerChunk,
      reference: ref.rowsPerChunk,
      limit: null,
      limitLabel: null,
      target: `≤ ${bound}`,
      met: ours.rowsPerChunk <= bound,
      note: '(rows written + alarms set) ÷ events, whole run, thread object included',
    });
  const pace = (clients: '0' | '10') => fmt(m.paced[clients].ours!.chunksPerSecond);
  out.push(
    rows('rows_paced_0', `(b) Rows written per chunk, ${pace('0')} chunks/s, 0 clients`, m.paced['0'].ours!, m.paced['0'].reference!, 0.02),
    rows('rows_paced_10', `(b) Rows written per chunk, ${pace('10')} chunks/s, 10 clients`, m.paced['10'].ours!, m.paced['10'].reference!, 0.1),
    rows('rows_full', '(b) Rows written per chunk, full speed', o, r, 0.01),
    figure({
      id: 'bytes',
      label: '(c) Stored bytes per chunk',
      unit: 'bytes',
      better: 'lower',
      ours: o.bytesPerChunk,
      reference: r.bytesPerChunk,
      limit: o.stats.payloadBytes !== null ? o.stats.payloadBytes / o.events : null,
      limitLabel: 'chunk JSON text',
      target: null,
      met: null,
      note: "the run object's databaseSize ÷ events after the full-speed run",
    }),
  );
  for (const clients of ['1', '10', '100'] as const) {
    const runs = m.paced[clients];
    for (const p of ['p50', 'p99'] as const) {
      const bound = p === 'p99' ? LATENCY_BOUNDS_MS[clients] : undefined;
      const value = runs.ours?.latency?.[p] ?? NaN;
      out.push(
        figure({
          id: `latency_${clients}_${p}`,
          label: `(d) Live latency ${p}, ${clients} client${clients === '1' ? '' : 's'}`,
          unit: 'ms',
          better: 'lower',
          ours: value,
          reference: runs.reference?.latency?.[p] ?? null,
          limit: runs.pipe?.latency?.[p] ?? null,
          limitLabel: 'storage-free pipe',
          target: bound === undefined ? null : `≤ ${bound} ms`,
          met: bound === undefined ? null : value <= bound,
          note: 'client receive − harness stamp at token pace; ours and the pipe: the run with the median p99 of 3',
        }),
      );
    }
  }
  m.config.replayCounts.forEach((count, i) => {
    const value = m.replays.ours[i]!.seconds * 1000;
    const raw = m.rawReplay[i]!.seconds * 1000;
    const largest = i === m.config.replayCounts.length - 1;
    out.push(
      figure({
        id: `replay_${count}`,
        label: `(e) Replay of ${count.toLocaleString('en-US')} events to a new client`,
        unit: 'ms',
        better: 'lower',
        ours: value,
        reference: m.replays.reference[i]!.seconds * 1000,
        limit: raw,
        limitLabel: 'one SELECT, one send per row',
        target: largest ? '≤ 1.5× raw' : null,
        met: largest ? value / raw <= 1.5 : null,
        note: `median of ${m.config.repetitions}: new WebSocket → status frame`,
      }),
    );
  });
  const growth = (peer: 'ours' | 'reference', key: 'rss' | 'heap') => (m.memory[peer].large[key] - m.memory[peer].small[key]) / MiB;
  const runs = `${fmt(m.config.fullSpeedChunks)}- vs ${fmt(m.config.smallRunChunks)}-event run`;
  out.push(
    figure({
      id: 'memory_heap',
      label: `(f) Isolate JS heap growth, ${runs}`,
      unit: 'MiB',
      better: 'lower',
      ours: growth('ours', 'heap'),
      reference: growth('reference', 'heap'),
      limit: null,
      limitLabel: null,
      target: '≤ 50 MiB',
      met: growth('ours', 'heap') <= 50,
      note: 'heap in use after two garbage collections (inspector), fresh object each',
    }),
    figure({
      id: 'memory_rss',
      label: `(f) workerd RSS growth, ${runs}`,
      unit: 'MiB',
      better: 'lower',
      ours: growth('ours', 'rss'),
      reference: growth('reference', 'rss'),
      limit: null,
      limitLabel: null,
      target: '≤ 50 MiB',
      met: growth('ours', 'rss') <= 50,
      note: 'VmRSS of the workerd processes, after a warm-up run of the same size; includes native memory (SQLite caches, buffers)',
    }),
  );
  if (m.runner) {
    out.push(
      figure({
        id: 'runner_rss_small',
        label: `(g) Runner RSS after a ${m.config.smallRunChunks}-delta run`,
        unit: 'MiB',
        better: 'lower',
        ours: m.runner.small / MiB,
        reference: null,
        limit: null,
        limitLabel: null,
        target: null,
        met: null,
        note: "the runner process's VmRSS (its harness processes not counted): spools past RUNNER_SPOOL_MEMORY_BYTES are on disk",
      }),
      figure({
        id: 'runner_rss_large',
        label: `(g) Runner RSS after a ${m.config.fullSpeedChunks}-delta run`,
        unit: 'MiB',
        better: 'lower',
        ours: m.runner.large / MiB,
        reference: null,
        limit: null,
        limitLabel: null,
        target: null,
        met: null,
        note: 'the same process after the large run: what grows with run size',
      }),
    );
  }
  if (m.idle) {
    out.push(
      figure({
        id: 'idle_clients_rss',
        label: `(h) workerd RSS with ${m.config.idleClients ?? 200} idle sockets on one run`,
        unit: 'MiB',
        better: 'lower',
        ours: m.idle.after / MiB,
        reference: null,
        limit: m.idle.before / MiB,
        limitLabel: 'the same, before they attached',
        target: null,
        met: null,
        note: `MAX_CLIENTS_PER_RUN sockets on a stalled run, nothing sent: ${fmt((m.idle.after - m.idle.before) / (m.config.idleClients ?? 200) / 1024)} KiB each`,
      }),
    );
  }
  if (m.claude) {
    out.push(
      figure({
        id: 'claude_bytes_per_chunk',
        label: `(c) Stored bytes per chunk, claude-code double, ${m.config.claudeAnswerChars ?? 20_000}-character answer`,
        unit: 'bytes',
        better: 'lower',
        ours: m.claude.databaseSize / m.claude.events,
        reference: null,
        limit: m.claude.payloadBytes === null ? null : m.claude.payloadBytes / m.claude.events,
        limitLabel: 'chunk JSON text',
        target: null,
        met: null,
        note: `${m.claude.events} chunks of delta-only text (one dialect): linear in the answer, not quadratic`,
      }),
    );
  }
  return out;
}

export function limitLines(m: Measurements): LimitLine[] {
  return [
    { label: 'SQLite inserts in one transaction (one chunk per row)', value: m.limits.sqliteInsertsPerSecond, unit: 'rows/s' },
    { label: 'WebSocket messages, workerd → Node client on loopback (run-sized frames)', value: m.limits.wsMessagesPerSecond, unit: 'msgs/s' },
    ...m.config.replayCounts.map((count, i) => ({
      label: `Raw replay of ${count.toLocaleString('en-US')} rows (one SELECT, one send per row)`,
      value: m.rawReplay[i]!.seconds * 1000,
      unit: 'ms',
    })),
    { label: 'Storage-free pipe: runner → Durable Object, parsed, nothing stored', value: m.large.pipe.chunksPerSecond, unit: 'chunks/s' },
  ];
}

export function notes(m: Measurements, machine: Machine): string[] {
  const all = [...Object.values(m.large), ...Object.values(m.oneClient), ...Object.values(m.paced).flatMap((x) => Object.values(x))];
  const incomplete = all.filter((x) => x.incompleteClients > 0);
  const replayIncomplete = [...m.replays.ours, ...m.replays.reference].filter((x) => x.incomplete > 0);
  const thread = m.paced['0'].ours?.stats.thread;
  return [
    'Reference: the TanStack Cloudflare run log layout (SPEC "legacy"): per chunk a read of `rec:<runId>`, then `evt:<runId>:<8 digits>` and `rec:<runId>` in one key-value transaction; replay with one `list()`. Fed by the same runner stream, it pushes the same frames to its sockets right after each write (kinder than the original, whose readers poll storage after every append).',
    'Ratios are ours ÷ reference and ours ÷ limit; whether higher or lower is better depends on the figure (the chart shows "× better").',
    `Token pace: the demo harness with \`delayMs: ${m.config.paceDelayMs}\` and ${m.config.chunkBytes}-byte deltas; the measured pace is in the row labels. Live latency = client receive time − the harness's \`timestamp\` on the chunk (same machine, same clock), for chunks stamped after every client was attached; the 100 clients share one Node process.`,
    `Rows written: the SQL cursor's \`rowsWritten\` summed over every statement the product ran, plus one per \`setAlarm\`, the run's thread object included${thread ? ` (${thread.rowsWritten} rows per run there)` : ''}; for the reference, keys written (one row each in the SQLite-backed key-value store).`,
    'Memory: the same protocol for both peers, after a warm-up run of the large size: a fresh object runs the small run, then another the large one; the figures are the differences. The runner\'s spool lives in the runner process, not in workerd.',
    'The storage-free pipe is a bench-only Durable Object that reads and parses the same runner stream and sends each chunk on at once, storing nothing.',
    ...(incomplete.length > 0 ? [`Correctness warning: ${incomplete.map((x) => `${x.peer} (${x.clients} clients)`).join(', ')} had clients with a gap, a duplicate or no status frame.`] : []),
    ...(replayIncomplete.length > 0 ? ['Correctness warning: a replay missed or duplicated events.'] : []),
    ...(machine.loadAverage1m > machine.cores * 0.5
      ? [`The machine was not idle when the bench started (load average ${machine.loadAverage1m} on ${machine.cores} cores): absolute figures are pessimistic and tail latencies noisy; ratios measured in the same run are the robust part.`]
      : []),
  ];
}
