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
 * The scenario is picked by the prompt (stdin): `[scenario:tool]` (the default:
 * text, a Bash call, its result, closing text), `[scenario:long N]` (an N-char
 * answer in 20-char deltas), `[scenario:api-error]`, `[scenario:invalid-key]`,
 * `[scenario:rate-limit]`, `[scenario:overloaded]`.
 */
import { randomUUID } from 'node:crypto';
import type { SDKMessage } from '@anthropic-ai/claude-agent-sdk';
import type { BetaMessage, BetaUsage } from '@anthropic-ai/sdk/resources/beta/messages/messages';
import { answerText, readStdin, scenarioOf, TOOL_COMMAND, TOOL_OUTPUT } from './scenarios.ts';

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

const sessionId = randomUUID();
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
    tools: ['Bash', 'Edit', 'Read', 'Write'],
    mcp_servers: [],
    model,
    permissionMode: (flag('--permission-mode')?.replace(/'/g, '') ?? 'default') as 'default',
    slash_commands: [],
    apiKeySource: 'ANTHROPIC_API_KEY',
    claude_code_version: '2.1.332',
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

function result(numTurns: number, isError: boolean, text: string, apiErrorStatus: number | null = null): void {
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
    permission_denials: [],
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

const prompt = await readStdin();
const scenario = scenarioOf(prompt);
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
}
