import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * The control server's background processes, as sandbox-container 0.12.x
 * keeps them (services/process-store.ts, process-service.ts): a record per
 * `processId`, created with NO duplicate check (a second start under the same
 * id overwrites the first record while the first process keeps running), the
 * command run by the session's shell with the per-process env exported inside
 * it only, status from the exit code (0 completed, 137/143 killed, else
 * failed), and a kill that takes the command's whole process tree (SIGTERM,
 * 5 s grace, then SIGKILL).
 */
export type ProcessStatus = 'running' | 'completed' | 'failed' | 'killed' | 'error';

export interface ProcessRecord {
  id: string;
  pid: number | undefined;
  command: string;
  status: ProcessStatus;
  startTime: Date;
  endTime: Date | undefined;
  exitCode: number | undefined;
  stdout: string;
  stderr: string;
  /** Called with each chunk of output and once more at exit; the SSE streams subscribe here. */
  listeners: Set<(event: { type: 'stdout' | 'stderr' | 'exit'; data?: string }) => void>;
  exited: Promise<void>;
}

export interface SpawnSpec {
  /** As the caller sent it: what the record shows. */
  command: string;
  /** What runs on this host (container paths rewritten). */
  hostCommand: string;
  cwd: string;
  env: Record<string, string>;
}

const TERM_GRACE_MS = 5_000;

function statusOf(exitCode: number): ProcessStatus {
  if (exitCode === 0) return 'completed';
  if (exitCode === 137 || exitCode === 143) return 'killed';
  return 'failed';
}

const SIGNAL_NUMBERS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

export class ProcessStore {
  readonly #records = new Map<string, ProcessRecord>();

  get(id: string): ProcessRecord | undefined {
    return this.#records.get(id);
  }

  list(): ProcessRecord[] {
    return [...this.#records.values()];
  }

  /** `bash -c`, in the container's process group (not detached): the container's end is its end. */
  start(id: string, spec: SpawnSpec): ProcessRecord {
    const child = spawn('/bin/bash', ['-c', spec.hostCommand], { cwd: spec.cwd, env: spec.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let settle!: () => void;
    const record: ProcessRecord = {
      id,
      pid: child.pid,
      command: spec.command,
      status: 'running',
      startTime: new Date(),
      endTime: undefined,
      exitCode: undefined,
      stdout: '',
      stderr: '',
      listeners: new Set(),
      exited: new Promise((resolve) => (settle = resolve)),
    };
    const output = (type: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const data = chunk.toString('utf8');
      record[type] += data;
      for (const listener of record.listeners) listener({ type, data });
    };
    child.stdout.on('data', output('stdout'));
    child.stderr.on('data', output('stderr'));
    const finish = (exitCode: number, status: ProcessStatus) => {
      if (record.endTime !== undefined) return;
      record.exitCode = exitCode;
      // A kill already marked it; an exit code never un-kills it.
      if (record.status === 'running') record.status = status;
      record.endTime = new Date();
      for (const listener of record.listeners) listener({ type: 'exit' });
      settle();
    };
    child.on('error', (error) => {
      record.stderr += `${error.message}\n`;
      finish(127, 'error');
    });
    child.on('close', (code, signal) => {
      const exitCode = code ?? 128 + (signal ? (SIGNAL_NUMBERS[signal] ?? 0) : 0);
      finish(exitCode, statusOf(exitCode));
    });
    // No duplicate check, as in ProcessStore.create: the id now names this process.
    this.#records.set(id, record);
    return record;
  }

  /** The whole tree, leaves included, as `killCommand` does; the record reads `killed` at once. */
  async kill(record: ProcessRecord): Promise<void> {
    if (record.pid === undefined || record.endTime !== undefined) return;
    const tree = descendants(record.pid);
    signalAll(tree, 'SIGTERM');
    record.status = 'killed';
    if (!(await exitedWithin(tree, TERM_GRACE_MS))) signalAll([...new Set([...tree, ...descendants(record.pid)])], 'SIGKILL');
    await record.exited;
  }

  async killAll(): Promise<number> {
    const running = this.list().filter((record) => record.status === 'running');
    await Promise.all(running.map((record) => this.kill(record)));
    return running.length;
  }
}

/** `pid` and every process below it, by walking /proc's parent links (detached children included). */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat, after the parenthesised command name.
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(parent) ?? [];
      list.push(Number(entry));
      children.set(parent, list);
    } catch {
      // Gone while we looked.
    }
  }
  const tree: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift()!;
    tree.push(next);
    queue.push(...(children.get(next) ?? []));
  }
  return tree;
}

function signalAll(pids: number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** A zombie (exited, not yet reaped by its parent) counts as gone. */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function exitedWithin(pids: number[], ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (pids.every((pid) => !alive(pid))) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return pids.every((pid) => !alive(pid));
}
