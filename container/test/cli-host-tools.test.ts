import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_TOOL_CALL_EVENT, type HarnessName, type RunnerRunRequest, type ToolDescriptor, type ToolOutcome } from '../../src/protocol/index.ts';
import { agUiProblems } from '../../test/support/ag-ui-check.ts';
import { runClaudeCode } from '../src/harnesses/claude-code.ts';
import { runCodex } from '../src/harnesses/codex.ts';
import type { Harness } from '../src/harnesses/types.ts';
import { runWithHostTools, textOf } from './doubles/harness-run.ts';
import { cleanEnv, json, runBody, runId, startTestRunner, stream, type Chunk, type TestRunner } from './helpers.ts';

/**
 * Host tools in the CLI harnesses, run in this process with the CLI doubles
 * on PATH (doubles/claude-double.ts for Claude Code 2.1.x, codex-double.ts
 * for codex 0.171.0): the real `@tanstack/ai-claude-code` / `-codex` adapter
 * serves the run's tools through its MCP bridge, the double connects to it
 * with `@modelcontextprotocol/sdk`'s client and calls the tool, and the test
 * answers the request chunk as the run object would (`HostTools.resolve`).
 */
const DOUBLES = fileURLToPath(new URL('./doubles/bin', import.meta.url));
const TOOLS: ToolDescriptor[] = [
  { name: 'lookup', description: 'The weather in a city.', inputSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  { name: 'convert', description: 'Converts a temperature.', inputSchema: { type: 'object', properties: { celsius: { type: 'number' } } } },
];

let workspace: string;
let path: string | undefined;
beforeAll(() => {
  workspace = mkdtempSync(join(tmpdir(), 'relay-claude-host-tools-'));
  // The local-process sandbox spawns the CLI with this process's environment.
  path = process.env.PATH;
  process.env.PATH = `${DOUBLES}${delimiter}${path ?? ''}`;
});
afterAll(() => {
  process.env.PATH = path;
  rmSync(workspace, { recursive: true, force: true });
});

interface Request {
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/**
 * One claude-code run; `answer` is called for each host tool request chunk
 * (after the test saw it in the stream) and returns the outcome to give.
 */
async function run(harness: keyof typeof HARNESSES, prompt: string, answer: (request: Request, id: string) => ToolOutcome | Promise<ToolOutcome>): Promise<{ id: string; chunks: Chunk[] }> {
  const id = runId(`${harness}_host`.replace('-', '_'));
  const request: RunnerRunRequest = { runId: id, threadId: 'thread_1', tenant: null, harness, messages: [{ role: 'user', content: prompt }], tools: TOOLS };
  return { id, chunks: await runWithHostTools(HARNESSES[harness], request, workspace, (value) => answer(value, id)) };
}

const HARNESSES: Record<Extract<HarnessName, 'claude-code' | 'codex'>, Harness> = { 'claude-code': runClaudeCode, codex: runCodex };

const ofType = (chunks: readonly Chunk[], type: string) => chunks.filter((chunk) => chunk.type === type);
const requests = (chunks: readonly Chunk[]) => chunks.filter((chunk) => chunk.type === 'CUSTOM' && chunk.name === HOST_TOOL_CALL_EVENT).map((chunk) => chunk.value as Request);

/** The bridge's listening sockets on this host: /proc/net/tcp{,6} rows in state LISTEN (0A) for `port`. */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  return ['/proc/net/tcp', '/proc/net/tcp6'].flatMap((file) =>
    readFileSync(file, 'utf8')
      .split('\n')
      .slice(1)
      .map((row) => row.trim().split(/\s+/))
      .filter((fields) => fields[1]?.endsWith(`:${hexPort}`) && fields[3] === '0A')
      .map((fields) => fields[1]!.split(':')[0]!),
  );
}

/** What each double's model does and says around a call, and the id its CLI gives it. */
const CLI = {
  'claude-code': { intro: (name: string) => `I will call ${name}.`, id: (_runId: string) => /^toolu_[0-9a-f]{24}$/ },
  // Codex numbers items per process; the harness puts the run id in front, so a thread's turns never share one.
  codex: { intro: (_name: string) => '', id: (runId: string) => new RegExp(`^${runId}-item_\\d+$`) },
} as const;

describe.each(['claude-code', 'codex'] as const)('%s host tools through the adapter MCP bridge (CLI double)', (harness) => {
  const cli = CLI[harness];

  it('runs a host tool call as one call: TOOL_CALL_START/ARGS/END, the request chunk and TOOL_CALL_RESULT share the model id', async () => {
    const { id, chunks } = await run(harness, 'weather please [scenario:host-tool lookup {"city":"Paris"}]', () => ({ output: { temp: 21, sky: 'clear' } }));
    expect(await agUiProblems(chunks)).toEqual([]);
    const start = ofType(chunks, 'TOOL_CALL_START');
    expect(start).toHaveLength(1);
    // The adapter strips the bridge's `mcp__tanstack__` prefix: the name the app registered.
    expect(start[0]).toMatchObject({ toolCallName: 'lookup' });
    const toolCallId = start[0]!.toolCallId as string;
    expect(toolCallId).toMatch(cli.id(id));
    expect(ofType(chunks, 'TOOL_CALL_ARGS').map((chunk) => chunk.toolCallId)).toEqual([toolCallId]);
    expect(JSON.parse(ofType(chunks, 'TOOL_CALL_ARGS').map((chunk) => chunk.delta).join(''))).toEqual({ city: 'Paris' });
    expect(requests(chunks)).toEqual([{ toolCallId, toolName: 'lookup', input: { city: 'Paris' } }]);
    // The request follows the call's own chunks, and the result follows the request.
    const at = (predicate: (chunk: Chunk) => boolean) => chunks.findIndex(predicate);
    const requestAt = at((chunk) => chunk.type === 'CUSTOM' && chunk.name === HOST_TOOL_CALL_EVENT);
    expect(at((chunk) => chunk.type === 'TOOL_CALL_END')).toBeLessThan(requestAt);
    const results = ofType(chunks, 'TOOL_CALL_RESULT');
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({ toolCallId });
    expect(JSON.parse(results[0]!.content as string)).toEqual({ temp: 21, sky: 'clear' });
    expect(at((chunk) => chunk.type === 'TOOL_CALL_RESULT')).toBeGreaterThan(requestAt);
    expect(textOf(chunks)).toBe(`${cli.intro('lookup')}lookup answered: {"temp":21,"sky":"clear"}`);
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
  });

  it('gives an error outcome to the model as a failed tool result, and the run goes on', async () => {
    const { chunks } = await run(harness, '[scenario:host-tool lookup {"city":"Atlantis"}]', () => ({ error: 'no such city' }));
    expect(await agUiProblems(chunks)).toEqual([]);
    const [request] = requests(chunks);
    const [result] = ofType(chunks, 'TOOL_CALL_RESULT');
    expect(result).toMatchObject({ toolCallId: request!.toolCallId });
    expect(result!.content).toContain('no such city');
    expect(textOf(chunks)).toContain('lookup failed: Tool execution failed: no such city');
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED' });
  });

  it('keeps two calls apart, each with its own id, in the order the model made them', async () => {
    const { chunks } = await run(harness, '[scenario:host-tool lookup {"city":"Oslo"}] [scenario:host-tool convert {"celsius":-3}]', (request) =>
      request.toolName === 'lookup' ? { output: { celsius: -3 } } : { output: '26.6 F' },
    );
    expect(await agUiProblems(chunks)).toEqual([]);
    const starts = ofType(chunks, 'TOOL_CALL_START');
    expect(starts.map((chunk) => chunk.toolCallName)).toEqual(['lookup', 'convert']);
    expect(requests(chunks)).toEqual([
      { toolCallId: starts[0]!.toolCallId, toolName: 'lookup', input: { city: 'Oslo' } },
      { toolCallId: starts[1]!.toolCallId, toolName: 'convert', input: { celsius: -3 } },
    ]);
    expect(starts[0]!.toolCallId).not.toBe(starts[1]!.toolCallId);
    expect(ofType(chunks, 'TOOL_CALL_RESULT').map((chunk) => [chunk.toolCallId, chunk.content])).toEqual([
      [starts[0]!.toolCallId, '{"celsius":-3}'],
      [starts[1]!.toolCallId, '26.6 F'],
    ]);
    expect(textOf(chunks)).toBe(`${cli.intro('lookup')}lookup answered: {"celsius":-3} convert answered: 26.6 F`);
  });

  // The MCP config file is Claude Code's (`--mcp-config`); both adapters provision the same bridge.
  it.runIf(harness === 'claude-code')('serves the bridge on loopback only, and refuses a request without its bearer token', async () => {
    let probed: { url: URL; listening: string[]; statuses: number[] } | undefined;
    const { chunks } = await run(harness, '[scenario:host-tool lookup {"city":"Rome"}]', async (_request, id) => {
      // While the call waits for its answer the adapter's MCP config is in the workspace: the URL and token the CLI got.
      const file = readdirSync(workspace).find((name) => name === `.tanstack-mcp-bridge-${id}.json`);
      expect(file).toBeDefined();
      const config = JSON.parse(readFileSync(join(workspace, file!), 'utf8')) as { mcpServers: { tanstack: { url: string; headers: { Authorization: string } } } };
      const { url, headers } = config.mcpServers.tanstack;
      const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '0' } } });
      const post = (authorization?: string) =>
        fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization !== undefined ? { authorization } : {}) }, body: initialize }).then(async (res) => {
          await res.text();
          return res.status;
        });
      const parsed = new URL(url);
      probed = { url: parsed, listening: listeners(Number(parsed.port)), statuses: [await post(), await post(`Bearer ${'0'.repeat(48)}`), await post(headers.Authorization)] };
      return { output: 'sunny' };
    });
    expect(probed?.url.hostname).toBe('127.0.0.1');
    // Bound to 127.0.0.1 (0100007F in /proc/net/tcp), not to every interface (00000000).
    expect(probed?.listening).toEqual(['0100007F']);
    // No token, a wrong one: 401. The CLI's own header: the MCP server answers.
    expect(probed?.statuses).toEqual([401, 401, 200]);
    expect(textOf(chunks)).toContain('lookup answered: sunny');
    // The config file with the token is gone once the run is over.
    expect(readdirSync(workspace).filter((name) => name.startsWith('.tanstack-mcp-bridge-'))).toEqual([]);
  });
});

/** The same calls through the runner: the harness in its own process, the answer by `POST /runs/:runId/tool-results`, as the run object sends it. */
describe.each(['claude-code', 'codex'] as const)('%s host tools through the runner', (harness) => {
  let runner: TestRunner;
  let root: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'relay-cli-host-tools-runner-'));
    // The doubles take any key; the runner only asks that the harness has one.
    const keys = { ANTHROPIC_API_KEY: 'sk-ant-api03-dummy-double-key-0123456789abcdef', OPENAI_API_KEY: 'sk-proj-dummy-double-key-0123456789abcdef' };
    runner = await startTestRunner({ env: cleanEnv({ ...keys, PATH: `${DOUBLES}${delimiter}${path ?? ''}`, RUNNER_WORKSPACE_ROOT: root }) });
  });
  afterAll(async () => {
    await runner.close();
    rmSync(root, { recursive: true, force: true });
  });

  it('streams the call, waits for the tool result route, then the result and the answer quoting it', async () => {
    const id = runId(`${harness}_routed`.replace('-', '_'));
    const answer = await stream(`${runner.url}/run`, 'POST', runBody(id, { harness, tools: TOOLS, messages: [{ role: 'user', content: '[scenario:host-tool lookup {"city":"Lima"}]' }] }));
    const before: Chunk[] = [];
    while (!(before.at(-1)?.type === 'CUSTOM' && before.at(-1)?.name === HOST_TOOL_CALL_EVENT)) before.push(...(await answer.chunks(1)));
    const [request] = requests(before);
    const start = ofType(before, 'TOOL_CALL_START');
    expect(start.map((chunk) => [chunk.toolCallId, chunk.toolCallName])).toEqual([[request!.toolCallId, 'lookup']]);
    expect(ofType(before, 'TOOL_CALL_END').map((chunk) => chunk.toolCallId)).toEqual([request!.toolCallId]);
    expect(request).toEqual({ toolCallId: request!.toolCallId, toolName: 'lookup', input: { city: 'Lima' } });
    // Nothing comes back until the call is answered: the CLI waits on its MCP request.
    expect(ofType(before, 'TOOL_CALL_RESULT')).toEqual([]);
    const posted = await json(`${runner.url}/runs/${id}/tool-results`, 'POST', { toolCallId: request!.toolCallId, output: { celsius: 19 } });
    expect(posted).toMatchObject({ status: 200, body: { delivered: true } });
    const { chunks: after, end } = await answer.rest();
    expect(end).toBe('end');
    const chunks = [...before, ...after];
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(ofType(after, 'TOOL_CALL_RESULT').map((chunk) => [chunk.toolCallId, chunk.content])).toEqual([[request!.toolCallId, '{"celsius":19}']]);
    expect(textOf(chunks)).toContain('lookup answered: {"celsius":19}');
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id });
  });
});
