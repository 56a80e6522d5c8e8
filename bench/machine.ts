import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';

/** What the numbers were measured on: they mean little without it. */
export interface Machine {
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  os: string;
  kernel: string;
  node: string;
  wrangler: string;
  workerd: string;
  /** 1-minute load average when the bench started: other work on the machine skews every figure. */
  loadAverage1m: number;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(`${ROOT}/node_modules/${name}/package.json`, 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function osName(): string {
  try {
    return /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1] ?? 'Linux';
  } catch {
    return process.platform;
  }
}

function cpuModel(): string {
  try {
    const model = /^model name\s*:\s*(.*)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1];
    if (model) return model.trim();
  } catch {
    // Not Linux.
  }
  return cpus()[0]?.model ?? 'unknown';
}

function workerdVersion(): string {
  try {
    const bin = `${ROOT}/node_modules/@cloudflare/workerd-linux-64/bin/workerd`;
    return execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  } catch {
    return `workerd ${packageVersion('workerd')}`;
  }
}

export function describeMachine(): Machine {
  return {
    cpuModel: cpuModel(),
    cores: cpus().length,
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    os: osName(),
    kernel: release(),
    node: process.version,
    wrangler: packageVersion('wrangler'),
    workerd: workerdVersion(),
    loadAverage1m: Math.round(loadavg()[0]! * 100) / 100,
  };
}

export function machineLine(m: Machine): string {
  return `${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, ${m.os} (Linux ${m.kernel}); Node ${m.node}, wrangler ${m.wrangler}, ${m.workerd}; load average ${m.loadAverage1m} at start`;
}
