/**
 * The harness process: spawned by the runner (supervisor.ts) once per run.
 *
 * stdin: one line, the `HarnessJob` as JSON; the pipe then stays open for
 * the run's host tool results, one JSON line each (`{toolCallId, output}` or
 * `{toolCallId, error}`, as the runner's `POST /runs/:runId/tool-results`
 * took them), and its end means the runner died, so the process group ends
 * itself. stdout: the run's chunks as NDJSON and nothing else. stderr: logs.
 */
import { Console } from 'node:console';
import { APPROVAL_TOOL, parseToolResult, parseTrustedJson, relayRunError, toolDescriptors, type HarnessName } from '../../src/protocol/index.ts';
import { ChunkWriter } from './chunk-writer.ts';
import { parseHarnessJob, type HarnessJob } from './harness-job.ts';
import { HostTools } from './host-tools.ts';
import { LineSplitter } from './line-splitter.ts';
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

/**
 * Reads stdin as lines: resolves with the first (the job) and hands each later
 * one to `onLine`. The runner is trusted, so lines have no length limit here
 * (its request body limit bounds the job).
 */
function readStdinLines(onLine: (line: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const splitter = new LineSplitter(Number.MAX_SAFE_INTEGER);
    let job: string | undefined;
    process.stdin.on('data', (data: Buffer) => {
      for (const line of splitter.push(data).lines) {
        if (job === undefined) resolve((job = line));
        else onLine(line);
      }
    });
    process.stdin.on('end', () => {
      if (job === undefined) reject(new Error('stdin ended before the run request line'));
      // The runner holds stdin open for the whole run: its end means the runner is gone.
      else process.kill(-process.pid, 'SIGKILL');
    });
  });
}

/** A tool result line from the runner, to the call waiting for it; a bad line is logged and dropped (the call keeps waiting). */
function onResultLine(line: string, tools: HostTools | undefined): void {
  try {
    const result = parseToolResult(parseTrustedJson(line, 'result'), 'result');
    if (tools === undefined) throw new Error(`this run has no host tools, so nothing waits for ${result.toolCallId}`);
    // The id and kind only: an output may hold anything. One line per result the runner passed on.
    process.stderr.write(`harness process: tool result for ${result.toolCallId} (${'error' in result.outcome ? 'error' : 'output'})\n`);
    tools.resolve(result);
  } catch (error) {
    process.stderr.write(`harness process: ignored a tool result line: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

async function main(): Promise<void> {
  // Results can only follow the calls the harness made, but a line may share a read with the job line: held until the tools exist.
  const early: string[] = [];
  let onLine = (line: string): void => void early.push(line);
  const jobLine = readStdinLines((line) => onLine(line));
  let job: HarnessJob;
  try {
    job = parseHarnessJob(parseTrustedJson(await jobLine, 'job'));
  } catch (error) {
    process.stderr.write(`harness process: bad run request: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(2);
  }
  const { request } = job;
  // The run's workspace secrets are in this environment too, whatever their names.
  const secretNames = request.workspace?.secrets ?? [];
  const redact = createRedactor(process.env, secretNames);
  const writer = new ChunkWriter(process.stdout, redact, secretValues(process.env, secretNames));
  // The approval tool is the harness's to call, never the model's: callable, not among the advertised tools.
  const unadvertised = request.approvals === 'client' ? toolDescriptors([APPROVAL_TOOL]) : [];
  const tools = (request.tools?.length ?? 0) > 0 || unadvertised.length > 0 ? new HostTools(request.tools ?? [], writer, { unadvertised }) : undefined;
  onLine = (line) => onResultLine(line, tools);
  for (const line of early.splice(0)) onLine(line);
  try {
    const harness = await HARNESSES[request.harness]();
    await harness({ request, workspace: job.workspace, writer, env: process.env, redact, ...(tools !== undefined ? { tools } : {}) });
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
