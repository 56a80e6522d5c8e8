/**
 * The harness process: spawned by the runner (supervisor.ts) once per run.
 *
 * stdin: one line, the `HarnessJob` as JSON; the pipe then stays open,
 * and its end means the runner died, so the process group ends itself.
 * stdout: the run's chunks as NDJSON and nothing else. stderr: logs.
 */
import { Console } from 'node:console';
import { parseTrustedJson, relayRunError, type HarnessName } from '../../src/protocol/index.ts';
import { ChunkWriter } from './chunk-writer.ts';
import { parseHarnessJob, type HarnessJob } from './harness-job.ts';
import { createRedactor, secretValues } from './redact.ts';
import type { Harness } from './harnesses/types.ts';

// Stray console output from any library would corrupt the NDJSON on stdout.
globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr });

const HARNESSES: Record<HarnessName, () => Promise<Harness>> = {
  demo: async () => (await import('./harnesses/demo.ts')).runDemo,
  'claude-code': async () => (await import('./harnesses/claude-code.ts')).runClaudeCode,
  codex: async () => (await import('./harnesses/codex.ts')).runCodex,
  chat: async () => (await import('./harnesses/chat.ts')).runChat,
};

function readRequestLine(): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffered = '';
    let done = false;
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (data: string) => {
      if (done) return;
      buffered += data;
      const newline = buffered.indexOf('\n');
      if (newline === -1) return;
      done = true;
      resolve(buffered.slice(0, newline));
    });
    process.stdin.on('end', () => {
      if (!done) reject(new Error('stdin ended before the run request line'));
      // The runner holds stdin open for the whole run: its end means the runner is gone.
      else process.kill(-process.pid, 'SIGKILL');
    });
  });
}

async function main(): Promise<void> {
  let job: HarnessJob;
  try {
    job = parseHarnessJob(parseTrustedJson(await readRequestLine(), 'job'));
  } catch (error) {
    process.stderr.write(`harness process: bad run request: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  const { request } = job;
  // The run's workspace secrets are in this environment too, whatever their names.
  const secretNames = request.workspace?.secrets ?? [];
  const redact = createRedactor(process.env, secretNames);
  const writer = new ChunkWriter(process.stdout, redact, secretValues(process.env, secretNames));
  try {
    const harness = await HARNESSES[request.harness]();
    await harness({ request, workspace: job.workspace, writer, env: process.env, redact });
  } catch (error) {
    const message = redact(error instanceof Error ? error.message : String(error));
    process.stderr.write(`harness process: ${redact(error instanceof Error ? (error.stack ?? message) : message)}\n`);
    writer.write(relayRunError(request.runId, request.threadId, 'runner_error', `The ${request.harness} harness failed: ${message}`));
  }
  await writer.close();
  // The open stdin would keep the process alive; the run is over.
  process.exit(0);
}

void main();
