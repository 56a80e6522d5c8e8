import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { RunnerRunRequest, RunnerRunStatus, ToolResult } from '../../src/protocol/index.ts';
import type { RunnerConfig } from './config.ts';
import { harnessEnv } from './harness-env.ts';
import { createRedactor, type Redactor } from './redact.ts';
import { RunSpool, type EndedState } from './spool.ts';
import { startHarnessProcess, type HarnessProcess } from './supervisor.ts';

export interface Run {
  readonly request: RunnerRunRequest;
  readonly spool: RunSpool;
  readonly process: HarnessProcess;
  readonly startedAt: number;
  endedAt?: number;
  /** Tool calls whose result went to the harness: the first answer wins, a repeat never reaches it. */
  readonly answered: Set<string>;
}

/** What became of a tool result (`deliverToolResult`). */
export type ToolResultDelivery = 'delivered' | 'already_answered' | 'run_ended';

export interface RegistryDeps {
  config: RunnerConfig;
  env: Record<string, string | undefined>;
  redact: Redactor;
  log: (line: string) => void;
}

/**
 * Every run this runner knows, live or recently ended.
 *
 * Retention: an ended run stays `spoolTtlMs` for reattach, and at most
 * `maxFinishedRuns` ended runs, holding at most `spoolDiskMaxBytes` of spool
 * files together, are kept (oldest evicted first). A live run is never
 * evicted: it does not depend on anyone reading it. An evicted run's spool is
 * deleted; the whole spool directory is deleted at shutdown.
 */
export class RunRegistry {
  readonly #deps: RegistryDeps;
  readonly #runs = new Map<string, Run>();
  /** Ended runs in the order they ended, with their eviction timers. */
  readonly #ended = new Map<string, NodeJS.Timeout>();
  /** This runner's own directory, so two runners never share files and shutdown removes all of them. */
  readonly #spoolDir: string;
  #runCount = 0;

  constructor(deps: RegistryDeps) {
    this.#deps = deps;
    this.#spoolDir = mkdtempSync(join(deps.config.spoolDir, 'harness-relay-spool-'));
  }

  get spoolDir(): string {
    return this.#spoolDir;
  }

  get(runId: string): Run | undefined {
    return this.#runs.get(runId);
  }

  has(runId: string): boolean {
    return this.#runs.has(runId);
  }

  /** The caller has checked that the run id is new and the harness available. `workspace`: the CLI harnesses' directory. */
  start(request: RunnerRunRequest, workspace?: string): Run {
    const { config, env, redact, log } = this.#deps;
    let run: Run | undefined;
    const spool = new RunSpool({
      keepAliveMs: config.keepAliveMs,
      dir: this.#spoolDir,
      prefix: `run-${this.#runCount++}`,
      memoryBytes: config.spoolMemoryBytes,
      maxBytes: config.maxSpoolBytes,
      onEnd: (state) => {
        if (run !== undefined) this.#onEnded(run, state);
      },
      onSpillError: (error) => {
        log(`run ${request.runId}: its spool could not be written (${error instanceof Error ? error.message : String(error)}); stopping the harness`);
        if (run !== undefined) void run.process.stop();
      },
    });
    const harness = startHarnessProcess({
      job: workspace === undefined ? { request } : { request, workspace },
      // The run's workspace secrets join the allowlist by name (the Worker checked them against WORKSPACE_SECRETS).
      env: harnessEnv(request.harness, env, request.workspace?.secrets),
      spool,
      maxLineBytes: config.maxLineBytes,
      killGraceMs: config.killGraceMs,
      // The run's workspace secrets are redacted from its harness's log lines too, whatever their names.
      redact: request.workspace?.secrets?.length ? createRedactor(env, request.workspace.secrets) : redact,
      log,
    });
    run = { request, spool, process: harness, startedAt: Date.now(), answered: new Set() };
    this.#runs.set(request.runId, run);
    log(`run ${request.runId} started: harness ${request.harness}, pid ${harness.pid ?? 'none'}`);
    // The spool may have ended already if the process could not even be spawned.
    if (spool.state !== 'running') this.#onEnded(run, spool.state);
    return run;
  }

  /** Idempotent. Ends the run's streams first (nothing is written after a cancel), then waits for the process to exit. */
  async cancel(run: Run): Promise<void> {
    run.spool.end('cancelled');
    await run.process.stop();
  }

  /**
   * Hands a tool call's outcome to the harness process, as one stdin line
   * (`{toolCallId, output}` or `{toolCallId, error}`), once per call: the
   * relay may post the same answer again (a retry, a restarted run object).
   * A call answered before is reported as such even once the run has ended.
   */
  deliverToolResult(run: Run, { toolCallId, outcome }: ToolResult): ToolResultDelivery {
    if (run.answered.has(toolCallId)) return 'already_answered';
    // A run past its terminal chunk (or cancelled) reads no more results, even while its process is still exiting.
    if (run.spool.state !== 'running' || run.process.pid === null) return 'run_ended';
    if (!run.process.send(JSON.stringify({ toolCallId, ...outcome }))) return 'run_ended';
    run.answered.add(toolCallId);
    return 'delivered';
  }

  status(run: Run): RunnerRunStatus {
    const { request, spool, process: harness, startedAt, endedAt } = run;
    const status: RunnerRunStatus = {
      runId: request.runId,
      threadId: request.threadId,
      harness: request.harness,
      state: spool.state,
      lastSeq: spool.lastSeq,
      pid: harness.pid,
      startedAt,
    };
    if (endedAt !== undefined) status.endedAt = endedAt;
    return status;
  }

  /** Runner shutdown: readers see their streams cut (not ended), every harness group is stopped. */
  async closeAll(): Promise<void> {
    for (const timer of this.#ended.values()) clearTimeout(timer);
    this.#ended.clear();
    const runs = [...this.#runs.values()];
    this.#runs.clear();
    for (const run of runs) run.spool.release();
    await Promise.all(runs.map((run) => run.process.stop()));
    rmSync(this.#spoolDir, { recursive: true, force: true });
  }

  #onEnded(run: Run, state: EndedState): void {
    if (this.#ended.has(run.request.runId)) return;
    run.endedAt = Date.now();
    this.#deps.log(`run ${run.request.runId} ${state}: last seq ${run.spool.lastSeq}`);
    const timer = setTimeout(() => this.#evict(run.request.runId), this.#deps.config.spoolTtlMs);
    timer.unref();
    this.#ended.set(run.request.runId, timer);
    while (this.#ended.size > this.#deps.config.maxFinishedRuns || (this.#ended.size > 1 && this.#endedDiskBytes() > this.#deps.config.spoolDiskMaxBytes)) {
      const oldest = this.#ended.keys().next().value;
      if (oldest === undefined) break;
      this.#evict(oldest);
    }
  }

  #endedDiskBytes(): number {
    let bytes = 0;
    for (const runId of this.#ended.keys()) bytes += this.#runs.get(runId)?.spool.held.diskBytes ?? 0;
    return bytes;
  }

  #evict(runId: string): void {
    const timer = this.#ended.get(runId);
    if (timer !== undefined) clearTimeout(timer);
    this.#ended.delete(runId);
    this.#runs.get(runId)?.spool.release();
    this.#runs.delete(runId);
  }
}
