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
 * - a failed API call as `error` events: "Reconnecting... n/5 (…)" while it
 *   retries, then the final one, then `turn.failed` with the same message.
 *
 * Scenarios as in scenarios.ts, plus `[scenario:reconnect]`: one retry notice,
 * then a normal run.
 */
import { randomUUID } from 'node:crypto';
import type { CodexThreadEvent } from '@tanstack/ai-codex';
import { answerText, readStdin, scenarioOf, TOOL_COMMAND, TOOL_OUTPUT } from './scenarios.ts';

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

function failTurn(status: string, body: string): void {
  for (let attempt = 1; attempt <= 5; attempt++) emit({ type: 'error', message: `Reconnecting... ${attempt}/5 (unexpected status ${status}: ${body})` });
  const message = `unexpected status ${status}: ${body}`;
  emit({ type: 'error', message });
  emit({ type: 'turn.failed', error: { message } });
}

/** `-c openai_base_url="…"`: the only way the real CLI takes a base URL (it ignores OPENAI_BASE_URL). */
function configuredBaseUrl(): string | undefined {
  for (let i = 0; i < args.length - 1; i++) {
    const match = args[i] === '--config' ? /^openai_base_url="(.*)"$/.exec(args[i + 1]!) : null;
    if (match) return match[1];
  }
  return undefined;
}

const prompt = await readStdin();
const scenario = scenarioOf(prompt);
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
  if (res.status !== 200) {
    const message = `unexpected status ${res.status} ${res.statusText}: ${body}`;
    emit({ type: 'error', message });
    emit({ type: 'turn.failed', error: { message } });
    process.exit(1);
  }
}
switch (scenario.kind) {
  case 'reconnect':
    emit({ type: 'error', message: 'Reconnecting... 1/5 (stream disconnected before completion: error sending request for url (https://api.openai.com/v1/responses))' });
  // falls through: the retry succeeds
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
  case 'api-error':
    failTurn('500 Internal Server Error', '{"error":{"message":"The server had an error while processing your request.","type":"server_error"}}');
    break;
  case 'invalid-key': {
    const message = 'unexpected status 401 Unauthorized: {"error":{"message":"Incorrect API key provided: sk-dummy. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","code":"invalid_api_key"}}';
    emit({ type: 'error', message });
    emit({ type: 'turn.failed', error: { message } });
    break;
  }
  case 'rate-limit':
    failTurn('429 Too Many Requests', '{"error":{"message":"Rate limit reached for requests","type":"requests","code":"rate_limit_exceeded"}}');
    break;
  case 'overloaded':
    failTurn('503 Service Unavailable', '{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error"}}');
    break;
}
