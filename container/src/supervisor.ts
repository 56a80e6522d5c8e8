import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { relayRunError } from '../../src/protocol/index.ts';
import type { HarnessJob } from './harness-job.ts';
import { LineSplitter, LineTooLongError, type SplitLines } from './line-splitter.ts';
import type { Redactor } from './redact.ts';
import type { RunSpool } from './spool.ts';

const HARNESS_ENTRY = fileURLToPath(new URL('./harness-process.ts', import.meta.url));

/** Harness stderr is logged line by line, cut to this length (after redaction, so no secret is cut in half). */
const MAX_LOG_LINE_CHARS = 2_000;

export interface HarnessProcessOptions {
  /** Sent to the harness on stdin; secrets are never part of it. */
  job: HarnessJob;
  /** The harness process's whole environment (harness-env.ts): the one place its credentials come from. */
  env: Record<string, string | undefined>;
  spool: RunSpool;
  maxLineBytes: number;
  killGraceMs: number;
  redact: Redactor;
  log: (line: string) => void;
}

export interface HarnessProcess {
  /** While the process runs; `null` once it has exited. */
  readonly pid: number | null;
  /** SIGTERM to the process group, SIGKILL after the grace period. Idempotent; resolves once it has exited. */
  stop(): Promise<void>;
  /**
   * One more line on the harness's stdin after the job (a tool result,
   * `harness-process.ts`). `line` is JSON text without a newline. False when
   * the process has exited or its stdin is closed: nothing was sent.
   */
  send(line: string): boolean;
}

/** Harnesses write only JSON objects; anything else on stdout is a library printing where it should not. */
function isObjectLine(line: string): boolean {
  return line.startsWith('{') && line.endsWith('}');
}

function dropStrayLines(split: SplitLines, onDropped: (line: string) => void): SplitLines {
  const kept: SplitLines = { lines: [], bytes: [] };
  split.lines.forEach((line, i) => {
    if (!isObjectLine(line)) return onDropped(line);
    kept.lines.push(line);
    kept.bytes.push(split.bytes[i]!);
  });
  return kept;
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    // Negative pid: the whole group, so a CLI the harness spawned goes too (no orphans).
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * Runs one harness as a child process in its own process group and feeds its
 * stdout, line by line, into the run's spool.
 *
 * Why a process: a harness (a CLI, an SDK, a crash test) can hang, leak or
 * die without taking the runner down, and a cancel is a signal to one group.
 * Stdin stays open after the request line: it carries the run's host tool
 * results (`send`), and its EOF tells the harness the runner is gone, so it
 * never outlives the runner.
 */
export function startHarnessProcess(options: HarnessProcessOptions): HarnessProcess {
  const { job, spool, redact, log } = options;
  const { request } = job;
  const tag = `[${request.runId} ${request.harness}]`;
  const child = spawn(process.execPath, [HARNESS_ENTRY], {
    detached: true,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: options.env,
  });
  let pid: number | null = child.pid ?? null;
  let exited = false;
  let killTimer: NodeJS.Timeout | undefined;
  let resolveExited!: () => void;
  const exitedPromise = new Promise<void>((resolve) => (resolveExited = resolve));

  const stop = (): Promise<void> => {
    if (!exited && pid !== null && killTimer === undefined) {
      killGroup(pid, 'SIGTERM');
      const target = pid;
      killTimer = setTimeout(() => killGroup(target, 'SIGKILL'), options.killGraceMs);
    }
    return exitedPromise;
  };

  child.stdin.on('error', () => {}); // EPIPE when the harness exits first; the exit handlers report it
  child.stdin.write(`${JSON.stringify(job)}\n`);

  // After its terminal chunk a harness exits by itself; one that lingers is stopped.
  const stopIfLingering = (): void => {
    const timer = setTimeout(() => void stop(), options.killGraceMs);
    void exitedPromise.then(() => clearTimeout(timer));
  };

  const splitter = new LineSplitter(options.maxLineBytes);
  child.stdout.on('data', (data: Buffer) => {
    if (spool.state !== 'running') return;
    let split: SplitLines;
    try {
      split = splitter.push(data);
    } catch (error) {
      if (!(error instanceof LineTooLongError)) throw error;
      const message = `The ${request.harness} harness wrote a chunk of ${error.bytes} bytes or more; the limit is ${options.maxLineBytes}.`;
      const line = JSON.stringify(relayRunError(request.runId, request.threadId, 'chunk_too_large', message));
      spool.append([line], [Buffer.byteLength(line)]);
      log(`${tag} ${message}`);
      void stop();
      return;
    }
    const { lines, bytes } = split.lines.every(isObjectLine) ? split : dropStrayLines(split, (line) => log(`${tag} skipped a stdout line that is not a JSON object: ${redact(line).slice(0, 200)}`));
    if (lines.length > 0 && spool.append(lines, bytes)) stopIfLingering();
  });

  const stderr = new LineSplitter(Number.MAX_SAFE_INTEGER);
  child.stderr.on('data', (data: Buffer) => {
    for (const line of stderr.push(data).lines) log(`${tag} ${redact(line).slice(0, MAX_LOG_LINE_CHARS)}`);
  });

  child.on('error', (error) => {
    log(`${tag} could not start the harness process: ${redact(error.message)}`);
    exited = true;
    pid = null;
    spool.end('crashed');
    resolveExited();
  });

  child.on('exit', (code, signal) => {
    if (pid !== null) killGroup(pid, 'SIGKILL'); // whatever the harness left behind in its group
    exited = true;
    pid = null;
    if (killTimer !== undefined) clearTimeout(killTimer);
    if (code !== 0) log(`${tag} harness process exited with ${signal ?? `code ${code}`}`);
    // A descendant that left the group could hold the pipes open and delay 'close' forever.
    setTimeout(() => {
      child.stdout.destroy();
      child.stderr.destroy();
    }, options.killGraceMs).unref();
  });

  // 'close' comes after stdout is fully read: only then is "no terminal chunk" a fact.
  child.on('close', () => {
    const tail = splitter.flush();
    if (tail.length > 0 && spool.state === 'running') log(`${tag} dropped ${tail.length} bytes of an unterminated last line`);
    spool.end('crashed');
    resolveExited();
  });

  const send = (line: string): boolean => {
    if (line.includes('\n')) throw new Error('a stdin line may not contain a newline');
    if (exited || child.stdin.destroyed || !child.stdin.writable) return false;
    // Not waiting for 'drain': a result is at most a few MiB and the harness reads stdin for the whole run.
    child.stdin.write(`${line}\n`);
    return true;
  };

  return {
    get pid() {
      return pid;
    },
    stop,
    send,
  };
}
