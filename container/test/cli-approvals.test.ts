import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { APPROVAL_TOOL, HOST_TOOL_CALL_EVENT, toolDescriptors, type RunnerRunRequest, type ToolDescriptor, type ToolOutcome } from '../../src/protocol/index.ts';
import { agUiProblems } from '../../test/support/ag-ui-check.ts';
import { runClaudeCode } from '../src/harnesses/claude-code.ts';
import { workspaceDir } from '../src/workspace.ts';
import { runWithHostTools, textOf } from './doubles/harness-run.ts';
import { cleanEnv, json, runBody, runId, startTestRunner, stream, type Chunk, type TestRunner } from './helpers.ts';

/**
 * `approvals: 'client'` in the claude-code harness, with the Claude Code
 * double on PATH (doubles/claude-double.ts, as 2.1.332 asks its
 * `--permission-prompt-tool`): the model runs the CLI's own Bash twice, the
 * CLI asks permission for each through the adapter's MCP bridge, each ask is
 * an `approve` client call, and the command runs only when it is allowed.
 * The commands are ones the real CLI asks for under acceptEdits, the mode a
 * run gets when it asks for none; the adapter's own default
 * (bypassPermissions) would ask for nothing.
 */
const DOUBLES = fileURLToPath(new URL('./doubles/bin', import.meta.url));
const LOOKUP: ToolDescriptor = { name: 'lookup', description: 'The weather in a city.', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } };
const bash = (file: string) => ({ command: `cp /dev/null ${file}`, description: `Create ${file}` });
const TWO_COMMANDS = `make two files [scenario:cli-tool Bash ${JSON.stringify(bash('approved.txt'))}] [scenario:cli-tool Bash ${JSON.stringify(bash('denied.txt'))}]`;

let workspace: string;
let path: string | undefined;
beforeAll(() => {
  path = process.env.PATH;
  // The local-process sandbox spawns the CLI with this process's environment.
  process.env.PATH = `${DOUBLES}${delimiter}${path ?? ''}`;
});
beforeEach(() => {
  workspace = mkdtempSync(join(tmpdir(), 'relay-claude-approvals-'));
  return () => rmSync(workspace, { recursive: true, force: true });
});
afterAll(() => {
  process.env.PATH = path;
});

interface Request {
  toolCallId: string;
  toolName: string;
  input: unknown;
  client?: true;
}

const ofType = (chunks: readonly Chunk[], type: string) => chunks.filter((chunk) => chunk.type === type);
const requests = (chunks: readonly Chunk[]) => chunks.filter((chunk) => chunk.type === 'CUSTOM' && chunk.name === HOST_TOOL_CALL_EVENT).map((chunk) => chunk.value as Request);
const resultOf = (chunks: readonly Chunk[], toolCallId: string) => chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT' && chunk.toolCallId === toolCallId);
const stateOf = (chunk: Chunk | undefined) => (chunk?.metadata as { tanstack?: { state?: string } } | undefined)?.tanstack?.state;

/** One claude-code run in this process, the harness process's HostTools as harness-process.ts builds them; `answer` plays the run object. */
async function run(prompt: string, answer: (request: Request) => ToolOutcome, fields: Partial<RunnerRunRequest> = {}): Promise<Chunk[]> {
  const request: RunnerRunRequest = { runId: runId('claude_approvals'), threadId: 'thread_1', tenant: null, harness: 'claude-code', messages: [{ role: 'user', content: prompt }], approvals: 'client', ...fields };
  return runWithHostTools(runClaudeCode, request, workspace, (value) => answer(value as Request), toolDescriptors([APPROVAL_TOOL]));
}

describe('claude-code approvals through the permission prompt tool (CLI double)', () => {
  it('asks once per command as an approve client call; the allowed command runs, the denied one does not', async () => {
    const chunks = await run(TWO_COMMANDS, (request) => {
      const { input } = request.input as { input: { command: string } };
      return input.command.endsWith('approved.txt') ? { output: { behavior: 'allow' } } : { output: { behavior: 'deny', message: 'Not that one.' } };
    });
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(existsSync(join(workspace, 'approved.txt'))).toBe(true);
    expect(existsSync(join(workspace, 'denied.txt'))).toBe(false);

    const bashCalls = ofType(chunks, 'TOOL_CALL_START').filter((chunk) => chunk.toolCallName === 'Bash');
    expect(bashCalls).toHaveLength(2);
    const [allowedId, deniedId] = bashCalls.map((chunk) => String(chunk.toolCallId));
    // The approval's id is the id of the call it gates, so a UI can show them together.
    expect(requests(chunks)).toEqual([
      { toolCallId: `${allowedId}-approve`, toolName: 'approve', input: { tool: 'Bash', input: bash('approved.txt') }, client: true, sandboxObserved: true },
      { toolCallId: `${deniedId}-approve`, toolName: 'approve', input: { tool: 'Bash', input: bash('denied.txt') }, client: true, sandboxObserved: true },
    ]);
    for (const id of [allowedId!, deniedId!]) {
      const approveId = `${id}-approve`;
      const at = (type: string, toolCallId: string) => chunks.findIndex((chunk) => chunk.type === type && chunk.toolCallId === toolCallId);
      const requestAt = chunks.findIndex((chunk) => chunk.type === 'CUSTOM' && (chunk.value as Request).toolCallId === approveId);
      // The model's call, then the approval (START/ARGS/END, the request, its result), then the call's result.
      expect(at('TOOL_CALL_END', id)).toBeLessThan(at('TOOL_CALL_START', approveId));
      expect(at('TOOL_CALL_START', approveId)).toBeLessThan(at('TOOL_CALL_ARGS', approveId));
      expect(at('TOOL_CALL_END', approveId)).toBeLessThan(requestAt);
      expect(requestAt).toBeLessThan(at('TOOL_CALL_RESULT', approveId));
      expect(at('TOOL_CALL_RESULT', approveId)).toBeLessThan(at('TOOL_CALL_RESULT', id));
      expect(ofType(chunks, 'TOOL_CALL_START').find((chunk) => chunk.toolCallId === approveId)).toMatchObject({ toolCallName: 'approve' });
    }
    expect(JSON.parse(String(resultOf(chunks, `${allowedId}-approve`)?.content))).toEqual({ behavior: 'allow' });
    expect(JSON.parse(String(resultOf(chunks, `${deniedId}-approve`)?.content))).toEqual({ behavior: 'deny', message: 'Not that one.' });
    expect(resultOf(chunks, allowedId!)).toMatchObject({ content: '(Bash completed with no output)' });
    expect(stateOf(resultOf(chunks, allowedId!))).toBeUndefined();
    // The CLI's refusal: the person's message as the failed result the model reads.
    expect(resultOf(chunks, deniedId!)).toMatchObject({ content: 'Not that one.' });
    expect(stateOf(resultOf(chunks, deniedId!))).toBe('output-error');
    expect(textOf(chunks)).toBe('I will call Bash.Bash answered: (Bash completed with no output) Bash denied: Not that one.');
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
  });

  it('denies, saying why, for an answer that is not a decision and for an error outcome (the client tool timeout)', async () => {
    const chunks = await run(TWO_COMMANDS, (request) => {
      const { input } = request.input as { input: { command: string } };
      return input.command.endsWith('approved.txt') ? { output: { behavior: 'yes' } } : { error: 'timeout: nobody answered within 3600 s' };
    });
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(existsSync(join(workspace, 'approved.txt'))).toBe(false);
    expect(existsSync(join(workspace, 'denied.txt'))).toBe(false);
    const [first, second] = requests(chunks);
    const firstResult = resultOf(chunks, first!.toolCallId);
    expect(JSON.parse(String(firstResult?.content))).toEqual({ behavior: 'deny', message: `Bash was not run: the answer was not {behavior: 'allow' | 'deny', message?: string} (behavior is "yes").` });
    const secondResult = resultOf(chunks, second!.toolCallId);
    expect(JSON.parse(String(secondResult?.content))).toEqual({ behavior: 'deny', message: 'Bash was not run: the approval was not given (timeout: nobody answered within 3600 s).' });
    // Not a person's decision: marked failed in the log, as any tool call that got no answer.
    expect([stateOf(firstResult), stateOf(secondResult)]).toEqual(['output-error', 'output-error']);
    expect(textOf(chunks)).toContain('Bash denied: Bash was not run: the approval was not given (timeout');
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
  });

  it("asks for the CLI's own tools even when the run's host tools are allowed outright (--allowedTools names only those)", async () => {
    const prompt = `[scenario:host-tool lookup {"city":"Oslo"}] [scenario:cli-tool Bash ${JSON.stringify(bash('approved.txt'))}]`;
    const chunks = await run(prompt, (request) => (request.toolName === 'lookup' ? { output: { celsius: -3 } } : { output: { behavior: 'allow' } }), { tools: [LOOKUP] });
    expect(await agUiProblems(chunks)).toEqual([]);
    const [lookup, approve] = requests(chunks);
    // The host tool is the model's: asked of the run object, not of a person, and never approved first.
    expect(lookup).toMatchObject({ toolName: 'lookup', input: { city: 'Oslo' } });
    expect(lookup).not.toHaveProperty('client');
    expect(approve).toMatchObject({ toolName: 'approve', input: { tool: 'Bash' }, client: true });
    expect(requests(chunks)).toHaveLength(2);
    expect(existsSync(join(workspace, 'approved.txt'))).toBe(true);
    expect(textOf(chunks)).toBe('I will call lookup.lookup answered: {"celsius":-3} Bash answered: (Bash completed with no output)');
  });

  it('keeps the run\'s permission mode: under bypassPermissions (the operator\'s choice) the CLI asks nothing', async () => {
    const chunks = await run(TWO_COMMANDS, () => ({ output: { behavior: 'deny' } }), { harnessOptions: { permissionMode: 'bypassPermissions' } });
    expect(requests(chunks)).toEqual([]);
    expect(existsSync(join(workspace, 'approved.txt'))).toBe(true);
    expect(existsSync(join(workspace, 'denied.txt'))).toBe(true);
  });
});

/** Through the runner: the harness in its own process (harness-process.ts builds the approval tool), the answers by `POST /runs/:runId/tool-results`. */
describe('claude-code approvals through the runner', () => {
  let runner: TestRunner;
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'relay-claude-approvals-runner-'));
    runner = await startTestRunner({ env: cleanEnv({ ANTHROPIC_API_KEY: 'sk-ant-api03-dummy-double-key-0123456789abcdef', PATH: `${DOUBLES}${delimiter}${path ?? ''}`, RUNNER_WORKSPACE_ROOT: root }) });
  });
  afterAll(async () => {
    await runner.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('waits on each approve call until the route answers it; only the allowed command ran in the thread workspace', async () => {
    const id = runId('claude_approvals_routed');
    const threadId = `thread_${id}`;
    const answer = await stream(`${runner.url}/run`, 'POST', runBody(id, { harness: 'claude-code', threadId, approvals: 'client', messages: [{ role: 'user', content: TWO_COMMANDS }] }));
    const chunks: Chunk[] = [];
    /** Reads on until the next request chunk after the ones already seen. */
    const nextRequest = async () => {
      const seen = requests(chunks).length;
      while (requests(chunks).length === seen) chunks.push(...(await answer.chunks(1)));
      return requests(chunks).at(-1)!;
    };
    const dir = workspaceDir(root, null, threadId);

    const first = await nextRequest();
    expect(first).toMatchObject({ toolName: 'approve', input: { tool: 'Bash', input: bash('approved.txt') }, client: true });
    // Nothing ran yet: the CLI waits on its permission prompt.
    expect(existsSync(join(dir, 'approved.txt'))).toBe(false);
    expect(await json(`${runner.url}/runs/${id}/tool-results`, 'POST', { toolCallId: first.toolCallId, output: { behavior: 'allow' } })).toMatchObject({ status: 200, body: { delivered: true } });

    const second = await nextRequest();
    expect(second).toMatchObject({ toolName: 'approve', input: { tool: 'Bash', input: bash('denied.txt') }, client: true });
    expect(existsSync(join(dir, 'approved.txt'))).toBe(true);
    expect(await json(`${runner.url}/runs/${id}/tool-results`, 'POST', { toolCallId: second.toolCallId, output: { behavior: 'deny', message: 'No second file.' } })).toMatchObject({ status: 200, body: { delivered: true } });

    const { chunks: after, end } = await answer.rest();
    expect(end).toBe('end');
    chunks.push(...after);
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(existsSync(join(dir, 'denied.txt'))).toBe(false);
    expect(textOf(chunks)).toBe('I will call Bash.Bash answered: (Bash completed with no output) Bash denied: No second file.');
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id });
  });
});
