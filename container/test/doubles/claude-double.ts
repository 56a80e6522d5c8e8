/**
 * A `claude` CLI double: what Claude Code 2.1.x (the Dockerfile pins 2.1.332)
 * writes for `claude -p --output-format stream-json --verbose
 * --include-partial-messages`, typed against `@anthropic-ai/claude-agent-sdk`
 * 0.3.332's `SDKMessage` (the SDK of that CLI release), so a fixture cannot
 * drift from the real shape unnoticed. As the real CLI does, it writes:
 *
 * - `session_id` and `uuid` on every line, a `system/init` line first and a
 *   `system/status` "requesting" before each API call;
 * - `stream_event` partials for every content block (`text_delta`,
 *   `input_json_delta`), and one `assistant` message per content block (with a
 *   `timestamp`) as soon as the block's content is complete, before its
 *   `content_block_stop`; all of a response share its `message.id`;
 * - a tool's `user` result as soon as the tool ran, before the response's
 *   `message_delta` / `message_stop`;
 * - an API failure as a synthetic assistant message (`model: "<synthetic>"`,
 *   `error`) and a `result` with `subtype: "success"`, `is_error: true`,
 *   `api_error_status` and `terminal_reason: "api_error"`, then exit code 1;
 * - a `result` with `num_turns`, durations, usage and cost.
 *
 * Checked against the real 2.1.332 binary (the agent SDK's
 * `@anthropic-ai/claude-agent-sdk-linux-x64`), run inside `unshare -n` with
 * non-essential traffic off against provider-double.ts: these orderings and
 * fields are what it wrote.
 *
 * With `--mcp-config` (a file or inline JSON: `{mcpServers: {<name>: {type:
 * "http", url, headers}}}`, what the adapter writes for its tool bridge) it
 * does what 2.1.332 did against that bridge: connects to each server before
 * `system/init` (which lists `mcp_servers` with their status and each tool as
 * `mcp__<server>__<tool>`), and for a model's call of such a tool sends MCP
 * `tools/call` with `_meta["claudecode/toolUseId"]`, then writes the `user`
 * result after the response's `message_stop`: the MCP content blocks, or for
 * an `isError` result the text as a failed result (`is_error: true`,
 * `tool_use_result: "Error: …"`), and the run goes on. Without an allow rule
 * (`--allowedTools mcp__tanstack__x` or `mcp__tanstack`) and outside
 * bypassPermissions, `-p` refuses the call: `system/permission_denied`, a failed
 * result "Claude requested permissions to use …, but you haven't granted it
 * yet.", and the denial in the result's `permission_denials`. (The real CLI
 * defers MCP tool schemas behind its ToolSearch tool, which a model calls
 * first; the double's model calls the tool directly. It also adds
 * `tool_use_meta` / `tool_result_meta`, which the SDK types lack and the
 * adapter does not read.)
 *
 *
 * With `--permission-prompt-tool mcp__<server>__<tool>` (what the adapter
 * passes when it serves one on its bridge) it does what 2.1.332 did: that tool
 * is not in `system/init`'s tools (nor offered to the model), and before one of
 * its own tools runs without an allow rule (`--allowedTools`) outside
 * bypassPermissions, after the response's `message_stop`, it calls the tool
 * with `{tool_name, input, tool_use_id}` and reads `{behavior, message?}` from
 * its text: `allow` runs the tool, `deny` writes a failed result with the
 * message (`tool_use_result: "Error: <message>"`) and the denial goes in the
 * result's `permission_denials`. Its Bash tool runs the command (`sh -c` in
 * the cwd). The real CLI's acceptEdits also runs some file-writing commands
 * (`touch`, `echo > f`) unasked; the double asks for every Bash command, so a
 * scenario uses one 2.1.332 asked for (`cp /dev/null <file>`). Without a
 * prompt tool, `-p` refuses as for an MCP tool (2.1.332's message names
 * what the command would do; the double's names the tool).
 *
 * The scenario is picked by the prompt (stdin): `[scenario:tool]` (the default:
 * text, a Bash call, its result, closing text), `[scenario:long N]` (an N-char
 * answer in 20-char deltas), `[scenario:api-error]`, `[scenario:invalid-key]`,
 * `[scenario:rate-limit]`, `[scenario:overloaded]`, and `[scenario:host-tool
 * <name> <JSON input>]` (once per call: each a response calling
 * `mcp__tanstack__<name>`, then closing text quoting every result), among
 * which `[scenario:cli-tool Bash <JSON input>]` calls the CLI's own Bash.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { SDKMessage, SDKPermissionDenial } from '@anthropic-ai/claude-agent-sdk';
import type { BetaMessage, BetaUsage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { McpServers, type HttpMcpServer } from './mcp-servers.ts';
import { answerText, readStdin, scenarioOf, TOOL_COMMAND, TOOL_OUTPUT, type HostToolScenarioCall } from './scenarios.ts';

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at === -1 ? undefined : args[at + 1];
};

// The real CLI refuses these combinations with these words.
if (!args.includes('-p') && !args.includes('--print')) fail('Error: Input must be provided either through stdin or as a prompt argument when using --print');
if (flag('--output-format') === 'stream-json' && !args.includes('--verbose')) fail('Error: When using --print, --output-format=stream-json requires --verbose');

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

const VERSION = '2.1.332';
const sessionId = randomUUID();
const permissionMode = flag('--permission-mode')?.replace(/'/g, '') ?? 'default';
/** `mcp__<server>__<tool>`, split: the MCP tool the CLI asks before running a tool no rule allows. */
const permissionPrompt = ((value) => (value === undefined ? undefined : { name: value, server: value.split('__')[1] ?? '', tool: value.split('__').slice(2).join('__') }))(flag('--permission-prompt-tool')?.replace(/'/g, ''));
const model = flag('--model') === 'sonnet' || flag('--model') === undefined ? 'claude-sonnet-4-6' : (flag('--model') as string);
const started = Date.now();
const usage: BetaUsage = {
  input_tokens: 12,
  output_tokens: 34,
  cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 },
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 8,
  inference_geo: null,
  iterations: null,
  server_tool_use: null,
  service_tier: 'standard',
  speed: null,
};
/** What the `result` line carries: the same counts, nulls replaced (`NonNullableUsage`). */
const resultUsage = { ...usage, cache_creation_input_tokens: 0, cache_read_input_tokens: 8, cache_creation: { ephemeral_1h_input_tokens: 0, ephemeral_5m_input_tokens: 0 }, inference_geo: '', iterations: [], server_tool_use: { web_fetch_requests: 0, web_search_requests: 0 }, service_tier: 'standard' as const, speed: 'standard' as const };

function emit(message: SDKMessage): void {
  process.stdout.write(`${JSON.stringify(message)}\n`);
}

function init(): void {
  emit({
    type: 'system',
    subtype: 'init',
    cwd: process.cwd(),
    session_id: sessionId,
    tools: ['Bash', 'Edit', 'Read', 'Write', ...mcp.statuses.flatMap((server) => server.tools.map((tool) => `mcp__${server.name}__${tool}`)).filter((name) => name !== permissionPrompt?.name)],
    mcp_servers: mcp.statuses.map(({ name, status }) => ({ name, status, source: 'dynamic' })),
    model,
    permissionMode: permissionMode as 'default',
    slash_commands: [],
    apiKeySource: 'ANTHROPIC_API_KEY',
    claude_code_version: VERSION,
    output_style: 'default',
    agents: [],
    skills: [],
    plugins: [],
    uuid: randomUUID(),
  });
}

function requesting(): void {
  emit({ type: 'system', subtype: 'status', status: 'requesting', uuid: randomUUID(), session_id: sessionId });
}

function streamEvent(event: Extract<SDKMessage, { type: 'stream_event' }>['event']): void {
  emit({ type: 'stream_event', event, parent_tool_use_id: null, uuid: randomUUID(), session_id: sessionId });
}

type Block = { type: 'text'; text: string; deltas: string[] } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown>; deltas: string[] };

/**
 * One model response: partials for every block, an `assistant` line per block,
 * all with one `message.id`; `afterBlock` runs once a block is complete (where
 * the CLI runs a tool and writes its result).
 */
function response(blocks: Block[], stopReason: 'end_turn' | 'tool_use', afterBlock: (block: Block) => void = () => {}): void {
  requesting();
  const id = `msg_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const base = { id, type: 'message', role: 'assistant', model, stop_reason: null, stop_sequence: null, stop_details: null, container: null, context_management: null, diagnostics: null } as const;
  streamEvent({ type: 'message_start', message: { ...base, content: [], usage: { ...usage, output_tokens: 1 } } });
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      streamEvent({ type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } });
      for (const text of block.deltas) streamEvent({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    } else {
      streamEvent({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } });
      for (const partial_json of block.deltas) streamEvent({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
    }
    const content = block.type === 'text' ? { type: 'text' as const, text: block.text, citations: null } : { type: 'tool_use' as const, id: block.id, name: block.name, input: block.input };
    emit({ type: 'assistant', message: { ...base, content: [content], usage }, parent_tool_use_id: null, uuid: randomUUID(), session_id: sessionId, timestamp: new Date().toISOString() });
    afterBlock(block);
    streamEvent({ type: 'content_block_stop', index });
  });
  streamEvent({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null, stop_details: null, container: null }, usage: { ...usage }, context_management: null });
  streamEvent({ type: 'message_stop' });
}

function textBlock(text: string, size = 20): Block {
  const deltas: string[] = [];
  for (let at = 0; at < text.length; at += size) deltas.push(text.slice(at, at + size));
  return { type: 'text', text, deltas };
}

function result(numTurns: number, isError: boolean, text: string, apiErrorStatus: number | null = null, denials: SDKPermissionDenial[] = []): void {
  emit({
    type: 'result',
    subtype: 'success',
    is_error: isError,
    duration_ms: Date.now() - started,
    duration_api_ms: Date.now() - started,
    num_turns: numTurns,
    result: text,
    api_error_status: isError ? apiErrorStatus : null,
    terminal_reason: isError ? 'api_error' : 'completed',
    stop_reason: isError ? 'stop_sequence' : 'end_turn',
    session_id: sessionId,
    total_cost_usd: isError ? 0 : 0.0021,
    usage: isError ? { ...resultUsage, input_tokens: 0, output_tokens: 0 } : resultUsage,
    modelUsage: {},
    permission_denials: denials,
    uuid: randomUUID(),
  });
}

/** How the CLI reports a failed API call once its retries are spent. */
function apiFailure(text: string, error: 'authentication_failed' | 'rate_limit' | 'overloaded' | 'server_error', status: number): void {
  requesting();
  const message: BetaMessage = {
    id: randomUUID(),
    type: 'message',
    role: 'assistant',
    model: '<synthetic>',
    stop_reason: 'stop_sequence',
    stop_sequence: '',
    stop_details: null,
    container: null,
    context_management: null,
    diagnostics: null,
    content: [{ type: 'text', text, citations: null }],
    usage: { ...usage, input_tokens: 0, output_tokens: 0 },
  };
  emit({ type: 'assistant', message, parent_tool_use_id: null, error, uuid: randomUUID(), session_id: sessionId, timestamp: new Date().toISOString() });
  result(1, true, text, status);
  process.exitCode = 1;
}

/** `--mcp-config`'s http servers: the value is a file (the adapter's, relative to the cwd) or inline JSON. */
function mcpConfig(): HttpMcpServer[] {
  const value = flag('--mcp-config')?.replace(/^'|'$/g, '');
  if (value === undefined) return [];
  const config = JSON.parse(value.trimStart().startsWith('{') ? value : readFileSync(value, 'utf8')) as { mcpServers?: Record<string, { type?: string; url?: string; headers?: Record<string, string> }> };
  return Object.entries(config.mcpServers ?? {}).flatMap(([name, server]) => (server.type === 'http' && typeof server.url === 'string' ? [{ name, url: server.url, headers: server.headers ?? {} }] : []));
}

/** Whether `-p` may run an MCP tool without asking: an allow rule names it or its server, or permissions are bypassed. */
function allowed(server: string, tool: string): boolean {
  if (permissionMode === 'bypassPermissions') return true;
  const rules = (flag('--allowedTools') ?? '').replace(/'/g, '').split(/[\s,]+/);
  return rules.includes(`mcp__${server}__${tool}`) || rules.includes(`mcp__${server}`) || rules.includes(`mcp__${server}__*`);
}

function toolResult(toolId: string, content: string | { type: 'text'; text: string }[], isError: boolean, toolUseResult: unknown): void {
  emit({
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolId, content, ...(isError ? { is_error: true } : {}) }] },
    parent_tool_use_id: null,
    tool_use_result: toolUseResult,
    uuid: randomUUID(),
    session_id: sessionId,
    timestamp: new Date().toISOString(),
  });
}

/** One model response calling `mcp__tanstack__<name>`, the call, and its result line; returns what the model read. */
async function hostToolCall({ name, input }: HostToolScenarioCall, first: boolean, denials: SDKPermissionDenial[]): Promise<string> {
  const toolId = `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const server = 'tanstack';
  const toolName = `mcp__${server}__${name}`;
  const json = JSON.stringify(input);
  response([...(first ? [textBlock(`I will call ${name}.`)] : []), { type: 'tool_use', id: toolId, name: toolName, input, deltas: [json] }], 'tool_use');
  if (!mcp.has(server, name)) {
    const text = `<tool_use_error>Error: No such tool available: ${toolName}</tool_use_error>`;
    toolResult(toolId, text, true, `Error: ${text}`);
    return `${name} failed: ${text}`;
  }
  if (!allowed(server, name)) {
    const message = `Claude requested permissions to use ${toolName}, but you haven't granted it yet.`;
    emit({ type: 'system', subtype: 'permission_denied', tool_name: toolName, tool_use_id: toolId, message, uuid: randomUUID(), session_id: sessionId });
    toolResult(toolId, message, true, `Error: ${message}`);
    denials.push({ tool_name: toolName, tool_use_id: toolId, tool_input: input });
    return `${name} failed: ${message}`;
  }
  const outcome = await mcp.call(server, name, input, { 'claudecode/toolUseId': toolId });
  if (outcome.isError) {
    toolResult(toolId, outcome.text, true, `Error: ${outcome.text}`);
    return `${name} failed: ${outcome.text}`;
  }
  toolResult(toolId, outcome.content, false, outcome.content);
  return `${name} answered: ${outcome.text}`;
}

/** The CLI's Bash tool: the command in the cwd, its output as the result (a failed one when it exits non-zero). */
function runBash(toolId: string, command: string): string {
  const ran = spawnSync('sh', ['-c', command], { cwd: process.cwd(), encoding: 'utf8' });
  const output = `${ran.stdout}${ran.stderr}`.trim();
  if (ran.status === 0) {
    const content = output === '' ? '(Bash completed with no output)' : output;
    emit({
      type: 'user',
      message: { role: 'user', content: [{ tool_use_id: toolId, type: 'tool_result', content, is_error: false }] },
      parent_tool_use_id: null,
      tool_use_result: { stdout: ran.stdout, stderr: ran.stderr, interrupted: false, isImage: false },
      uuid: randomUUID(),
      session_id: sessionId,
      timestamp: new Date().toISOString(),
    });
    return `Bash answered: ${content}`;
  }
  const text = `Exit code ${ran.status ?? 1}\n${output}`.trim();
  toolResult(toolId, text, true, `Error: ${text}`);
  return `Bash failed: ${text}`;
}

/** The permission prompt tool's decision: its text is the JSON `{behavior, message?}`; anything else denies. */
async function askPermission(name: string, input: Record<string, unknown>, toolId: string): Promise<{ behavior: 'allow' | 'deny'; message: string }> {
  const outcome = await mcp.call(permissionPrompt!.server, permissionPrompt!.tool, { tool_name: name, input, tool_use_id: toolId });
  try {
    const answer = JSON.parse(outcome.text) as { behavior?: unknown; message?: unknown };
    if (!outcome.isError && (answer.behavior === 'allow' || answer.behavior === 'deny')) return { behavior: answer.behavior, message: typeof answer.message === 'string' ? answer.message : '' };
  } catch {
    // Not JSON: refused below, as any answer that is not a decision.
  }
  return { behavior: 'deny', message: `Permission prompt tool returned an invalid result: ${outcome.text}` };
}

/** One response calling the CLI's own tool, the permission it needs, and its result line; returns what the model read. */
async function cliToolCall({ name, input }: HostToolScenarioCall, first: boolean, denials: SDKPermissionDenial[]): Promise<string> {
  const toolId = `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
  const blocks: Block[] = [...(first ? [textBlock(`I will call ${name}.`)] : []), { type: 'tool_use', id: toolId, name, input, deltas: [JSON.stringify(input)] }];
  const command = input.command;
  if (name !== 'Bash' || typeof command !== 'string') {
    response(blocks, 'tool_use');
    const text = `<tool_use_error>Error: No such tool available: ${name}</tool_use_error>`;
    toolResult(toolId, text, true, `Error: ${text}`);
    return `${name} failed: ${text}`;
  }
  const rules = (flag('--allowedTools') ?? '').replace(/'/g, '').split(/[\s,]+/);
  if (permissionMode === 'bypassPermissions' || rules.includes(name)) {
    // Allowed: the tool runs as soon as its block is complete, before the response ends.
    let said = '';
    response(blocks, 'tool_use', (block) => {
      if (block.type === 'tool_use') said = runBash(toolId, command);
    });
    return said;
  }
  response(blocks, 'tool_use');
  if (permissionPrompt === undefined || !mcp.has(permissionPrompt.server, permissionPrompt.tool)) {
    const message = `Claude requested permissions to use ${name}, but you haven't granted it yet.`;
    emit({ type: 'system', subtype: 'permission_denied', tool_name: name, tool_use_id: toolId, message, uuid: randomUUID(), session_id: sessionId });
    toolResult(toolId, message, true, `Error: ${message}`);
    denials.push({ tool_name: name, tool_use_id: toolId, tool_input: input });
    return `${name} failed: ${message}`;
  }
  const decision = await askPermission(name, input, toolId);
  if (decision.behavior === 'allow') return runBash(toolId, command);
  emit({
    type: 'user',
    message: { role: 'user', content: [{ type: 'tool_result', content: decision.message, is_error: true, tool_use_id: toolId }] },
    parent_tool_use_id: null,
    tool_use_result: `Error: ${decision.message}`,
    uuid: randomUUID(),
    session_id: sessionId,
    timestamp: new Date().toISOString(),
  });
  denials.push({ tool_name: name, tool_use_id: toolId, tool_input: input });
  return `${name} denied: ${decision.message}`;
}

const prompt = await readStdin();
const scenario = scenarioOf(prompt);
// The real CLI connects to its MCP servers before `system/init`, which reports them.
const mcp = await McpServers.connect(mcpConfig(), { name: 'claude-code', version: VERSION });
init();
switch (scenario.kind) {
  case 'tool': {
    const toolId = `toolu_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const input = { command: TOOL_COMMAND, description: 'List the files' };
    const json = JSON.stringify(input);
    const ranTool = (block: Block) => {
      if (block.type !== 'tool_use') return;
      emit({
        type: 'user',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolId, content: TOOL_OUTPUT, is_error: false }] },
        parent_tool_use_id: null,
        tool_use_result: { stdout: TOOL_OUTPUT, stderr: '', interrupted: false, isImage: false },
        uuid: randomUUID(),
        session_id: sessionId,
        timestamp: new Date().toISOString(),
      });
    };
    response([textBlock('I will list the files.'), { type: 'tool_use', id: toolId, name: 'Bash', input, deltas: [json.slice(0, 10), json.slice(10)] }], 'tool_use', ranTool);
    const closing = answerText(prompt);
    response([textBlock(closing)], 'end_turn');
    result(2, false, closing);
    break;
  }
  case 'long': {
    const text = answerText(prompt, scenario.chars);
    response([textBlock(text)], 'end_turn');
    result(1, false, text);
    break;
  }
  case 'api-error':
    apiFailure('API Error: 500 {"type":"error","error":{"type":"api_error","message":"Internal server error"}}', 'server_error', 500);
    break;
  case 'invalid-key':
    apiFailure('Invalid API key · Fix external API key', 'authentication_failed', 401);
    break;
  case 'rate-limit':
    apiFailure('API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit', 'rate_limit', 429);
    break;
  case 'overloaded':
    // The real CLI names the gateway it was pointed at; the double names none.
    apiFailure('API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.', 'server_error', 529);
    break;
  case 'host-tool': {
    const denials: SDKPermissionDenial[] = [];
    const said: string[] = [];
    for (const [at, call] of scenario.calls.entries()) said.push(await (call.cli ? cliToolCall : hostToolCall)(call, at === 0, denials));
    const closing = said.join(' ');
    response([textBlock(closing)], 'end_turn');
    result(scenario.calls.length + 1, false, closing, null, denials);
    break;
  }
}
await mcp.close();
