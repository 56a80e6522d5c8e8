/**
 * A `codex` CLI double: the JSONL `codex exec --experimental-json` (the
 * Dockerfile pins codex 0.171.0) writes, typed against `@tanstack/ai-codex`'s
 * `CodexThreadEvent`, the adapter's structural copy of `@openai/codex-sdk`'s
 * `ThreadEvent`. (The SDK itself is no devDependency: it depends on
 * `@openai/codex`, whose real `codex` would land in node_modules/.bin, first
 * on every npm script's PATH.) As the real CLI does:
 *
 * - `thread.started`, `turn.started`, items as `item.started` / `item.completed`
 *   (an agent message arrives whole), `turn.completed` with usage;
 * - a failed API call as a final `error` and `turn.failed` with the same
 *   message, then exit code 1: "unexpected status 401 Unauthorized: <the
 *   provider's message>, url: …" after five "Reconnecting... n/5 (…)" notices,
 *   or "exceeded retry limit, last status: 429 Too Many Requests";
 * - against a server without the Responses WebSocket, "Reconnecting... n/5"
 *   notices and an `error` item "Falling back from WebSockets to HTTPS
 *   transport", then the normal turn.
 *
 * Checked against the real 0.171.0 binary run inside `unshare -n` against
 * provider-double.ts (401, 429, the WebSocket fallback and a normal turn).
 *
 * Scenarios as in scenarios.ts, plus `[scenario:reconnect]`: the WebSocket
 * fallback's notices, then a normal run.
 *
 * MCP servers come as the adapter gives its tool bridge: `--config
 * mcp_servers.<name>.url="…"` and `http_headers={ "Authorization" = "Bearer
 * …" }`. As 0.171.0 did against that bridge (recorded inside `unshare -n`),
 * the double connects at startup and, for `[scenario:host-tool <name> <JSON
 * input>]`, writes an `mcp_tool_call` item (`item.started` in_progress, then
 * `item.completed`), calling the tool over MCP with `_meta.callId`: its
 * `result` content and `completed`, an `isError` result's content and
 * `failed`. Under `approval_policy="never"` the call is made only if the
 * server's `default_tools_approval_mode` is `"approve"`; otherwise the item
 * fails with "MCP tool call requires approval, but approval policy is never"
 * and no request is sent. A tool the CLI does not have writes no item at all
 * (the model reads "unsupported call: mcp__<server>__<name>"). The real CLI
 * writes `result: null` / `error: null` where the adapter's types make them
 * optional; the double leaves them out.
 */
import { randomUUID } from 'node:crypto';
import type { CodexThreadEvent } from '@tanstack/ai-codex';
import { McpServers, type HttpMcpServer } from './mcp-servers.ts';
import { answerText, readStdin, scenarioOf, TOOL_COMMAND, TOOL_OUTPUT, type HostToolScenarioCall } from './scenarios.ts';

const args = process.argv.slice(2);
if (args[0] !== 'exec' || !args.includes('--experimental-json')) {
  process.stderr.write('error: this double plays only `codex exec --experimental-json`\n');
  process.exit(2);
}

function emit(event: CodexThreadEvent): void {
  process.stdout.write(`${JSON.stringify(event)}\n`);
}

let item = 0;
const nextId = () => `item_${item++}`;

/** The final failure: an `error`, the same message as `turn.failed`, exit code 1. */
function failTurn(message: string): void {
  emit({ type: 'error', message });
  emit({ type: 'turn.failed', error: { message } });
  process.exitCode = 1;
}

/** `-c openai_base_url="…"`: the only way the real CLI takes a base URL (it ignores OPENAI_BASE_URL). */
function configuredBaseUrl(): string | undefined {
  for (let i = 0; i < args.length - 1; i++) {
    const match = args[i] === '--config' ? /^openai_base_url="(.*)"$/.exec(args[i + 1]!) : null;
    if (match) return match[1];
  }
  return undefined;
}

/** Every `--config key=value`, the value as TOML text. */
function configValues(): Map<string, string> {
  const values = new Map<string, string>();
  for (let i = 0; i < args.length - 1; i++) {
    const match = args[i] === '--config' ? /^([^=]+)=(.*)$/s.exec(args[i + 1]!) : null;
    if (match) values.set(match[1]!.trim(), match[2]!.trim());
  }
  return values;
}

const config = configValues();
const tomlString = (value: string | undefined) => /^"(.*)"$/s.exec(value ?? '')?.[1];

/** `mcp_servers.<name>.url` with its `http_headers` inline table: the streamable-HTTP servers. */
function mcpConfig(): HttpMcpServer[] {
  const servers: HttpMcpServer[] = [];
  for (const [key, value] of config) {
    const name = /^mcp_servers\.([^.]+)\.url$/.exec(key)?.[1];
    const url = tomlString(value);
    if (name === undefined || url === undefined) continue;
    const headers: Record<string, string> = {};
    for (const [, header, text] of (config.get(`mcp_servers.${name}.http_headers`) ?? '').matchAll(/"([^"]+)"\s*=\s*"([^"]*)"/g)) headers[header!] = text!;
    servers.push({ name, url, headers });
  }
  return servers;
}

/** One `mcp_tool_call` item, the call made over MCP when it may be; returns what the model read. */
async function mcpToolCall({ name, input }: HostToolScenarioCall): Promise<string> {
  const server = 'tanstack';
  if (!mcp.has(server, name)) return `${name} failed: unsupported call: mcp__${server}__${name}`;
  const base = { id: nextId(), type: 'mcp_tool_call' as const, server, tool: name, arguments: input };
  emit({ type: 'item.started', item: { ...base, status: 'in_progress' } });
  const policy = tomlString(config.get('approval_policy')) ?? 'on-request';
  if (tomlString(config.get(`mcp_servers.${server}.default_tools_approval_mode`)) !== 'approve') {
    const message = `MCP tool call requires approval, but approval policy is ${policy}`;
    emit({ type: 'item.completed', item: { ...base, error: { message }, status: 'failed' } });
    return `${name} failed: ${message}`;
  }
  const outcome = await mcp.call(server, name, input, { callId: `call_${randomUUID().replace(/-/g, '').slice(0, 24)}` });
  emit({ type: 'item.completed', item: { ...base, result: { content: outcome.content, structured_content: null }, status: outcome.isError ? 'failed' : 'completed' } });
  return `${name} ${outcome.isError ? 'failed' : 'answered'}: ${outcome.text}`;
}

const BASE_URL_SHOWN = 'https://api.openai.com/v1';

const prompt = await readStdin();
const scenario = scenarioOf(prompt);
const mcp = await McpServers.connect(mcpConfig(), { name: 'codex-mcp-client', version: '0.171.0' });
emit({ type: 'thread.started', thread_id: randomUUID() });
emit({ type: 'turn.started' });
// With a base URL the turn's model call goes there, authenticated with CODEX_API_KEY, as the real CLI's does.
const baseUrl = configuredBaseUrl();
if (baseUrl !== undefined) {
  const res = await fetch(`${baseUrl}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${process.env.CODEX_API_KEY ?? ''}` },
    body: JSON.stringify({ model: 'gpt-5.3-codex', input: [{ role: 'user', content: prompt }], stream: true }),
  });
  const body = await res.text();
  if (res.status === 401 || res.status === 403) {
    let said = body;
    try {
      said = (JSON.parse(body) as { error?: { message?: string } }).error?.message ?? body;
    } catch {
      // Not JSON: the body as it came.
    }
    const detail = `unexpected status ${res.status} ${res.statusText}: ${said}, url: ${baseUrl}/responses`;
    for (let attempt = 1; attempt <= 5; attempt++) emit({ type: 'error', message: `Reconnecting... ${attempt}/5 (${detail})` });
    failTurn(detail);
    process.exit(1);
  }
  if (res.status !== 200) {
    failTurn(`exceeded retry limit, last status: ${res.status} ${res.statusText}`);
    process.exit(1);
  }
}
switch (scenario.kind) {
  case 'reconnect':
    // What codex 0.171.0 writes against a server without the Responses WebSocket: four notices, then it falls back to HTTPS.
    for (let attempt = 2; attempt <= 5; attempt++) {
      emit({ type: 'error', message: `Reconnecting... ${attempt}/5 (unexpected status 404 Not Found: no route, url: ws://127.0.0.1/v1/responses)` });
    }
    emit({ type: 'item.completed', item: { id: nextId(), type: 'error', message: 'Falling back from WebSockets to HTTPS transport. unexpected status 404 Not Found: no route, url: ws://127.0.0.1/v1/responses' } });
  // falls through: the HTTPS request succeeds
  case 'tool': {
    const commandId = nextId();
    emit({ type: 'item.completed', item: { id: nextId(), type: 'reasoning', text: '**Listing the files**' } });
    emit({ type: 'item.started', item: { id: commandId, type: 'command_execution', command: `bash -lc ${TOOL_COMMAND}`, aggregated_output: '', status: 'in_progress' } });
    emit({ type: 'item.completed', item: { id: commandId, type: 'command_execution', command: `bash -lc ${TOOL_COMMAND}`, aggregated_output: TOOL_OUTPUT, exit_code: 0, status: 'completed' } });
    emit({ type: 'item.completed', item: { id: nextId(), type: 'agent_message', text: answerText(prompt) } });
    emit({ type: 'turn.completed', usage: { input_tokens: 120, cached_input_tokens: 64, output_tokens: 30, reasoning_output_tokens: 10 } });
    break;
  }
  case 'long':
    emit({ type: 'item.completed', item: { id: nextId(), type: 'agent_message', text: answerText(prompt, scenario.chars) } });
    emit({ type: 'turn.completed', usage: { input_tokens: 120, cached_input_tokens: 0, output_tokens: 5000, reasoning_output_tokens: 0 } });
    break;
  // 5xx and 429: codex retries quietly, then says only the last status (the form checked for 429).
  case 'api-error':
    failTurn('exceeded retry limit, last status: 500 Internal Server Error');
    break;
  case 'invalid-key': {
    // A 401 is retried out loud, each notice carrying the provider's own message.
    const detail = `unexpected status 401 Unauthorized: Incorrect API key provided: sk-dummy. You can find your API key at https://platform.openai.com/account/api-keys., url: ${BASE_URL_SHOWN}/responses`;
    for (let attempt = 1; attempt <= 5; attempt++) emit({ type: 'error', message: `Reconnecting... ${attempt}/5 (${detail})` });
    failTurn(detail);
    break;
  }
  case 'rate-limit':
    failTurn('exceeded retry limit, last status: 429 Too Many Requests');
    break;
  case 'overloaded':
    failTurn('exceeded retry limit, last status: 503 Service Unavailable');
    break;
  case 'host-tool': {
    const said: string[] = [];
    for (const call of scenario.calls) said.push(await mcpToolCall(call));
    emit({ type: 'item.completed', item: { id: nextId(), type: 'agent_message', text: said.join(' ') } });
    emit({ type: 'turn.completed', usage: { input_tokens: 120, cached_input_tokens: 0, output_tokens: 30, reasoning_output_tokens: 0 } });
    break;
  }
}
await mcp.close();
