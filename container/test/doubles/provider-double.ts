/**
 * An HTTP double of the two provider APIs the chat harness speaks, reached
 * through ANTHROPIC_BASE_URL / OPENAI_BASE_URL as a Cloudflare AI Gateway URL
 * would be: Anthropic Messages (`POST /v1/messages`, SSE) and OpenAI Responses
 * (`POST /v1/responses`, SSE). Every event is typed against the provider SDK's
 * own stream event type (`@anthropic-ai/sdk` 0.97.1's `RawMessageStreamEvent`,
 * `openai` 6.49.0's `ResponseStreamEvent`), and error bodies are the APIs'
 * documented shapes.
 *
 * Scenarios (scenarios.ts) come from the last user message: `tool` streams text
 * and a tool call (a second request, carrying the tool result, gets the closing
 * text), `long` a long answer in 20-char deltas, `api-error` a mid-stream error
 * event after some text, `invalid-key` 401, `rate-limit` 429, `overloaded`
 * Anthropic's 529 / OpenAI's 503. `host-tool` calls the run's own tools the
 * request advertises, one per model turn in the prompt's order, then answers
 * `hostToolAnswer` of their results (a tool the request does not offer is
 * answered with text saying so, and no call).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RawMessageStreamEvent } from '@anthropic-ai/sdk/resources/messages';
import type { Response as OpenAiResponse, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { answerText, DELTA_CHARS, scenarioOf, type HostToolScenarioCall, type Scenario } from './scenarios.ts';

export const TOOL_NAME = 'list_files';

export interface ProviderDouble {
  /** Base URL without `/v1`: ANTHROPIC_BASE_URL is this, OPENAI_BASE_URL is this + `/v1`. */
  url: string;
  /** Each request's path and its `x-api-key` / bearer key, in order. */
  requests: { path: string; key: string | undefined }[];
  close(): Promise<void>;
}

type Body = { messages?: { role: string; content: unknown }[]; input?: unknown; model?: string; tools?: unknown };
type Item = { role?: string; type?: string; content?: unknown; output?: unknown };

function items(body: Body): Item[] {
  return Array.isArray(body.messages) ? body.messages : Array.isArray(body.input) ? (body.input as Item[]) : [];
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : '')).join(' ');
  return '';
}

/** The prompt: the last user message with text (Anthropic sends a tool's result as a user message of its own). */
function lastUserText(body: Body): string {
  for (const item of [...items(body)].reverse()) {
    const text = item.role === 'user' ? textOf(item.content) : '';
    if (text.trim() !== '') return text;
  }
  return '';
}

/** The tools' results the conversation carries, in order: Anthropic `tool_result` blocks, OpenAI `function_call_output` items. */
function toolResults(body: Body): string[] {
  return items(body).flatMap((item) => {
    if (item.type === 'function_call_output') return [textOf(item.output)];
    if (!Array.isArray(item.content)) return [];
    return (item.content as { type?: string; content?: unknown }[]).filter((block) => block.type === 'tool_result').map((block) => textOf(block.content));
  });
}

/** Names of the tools the request offers the model (both APIs put `name` at the top of each). */
function offeredTools(body: Body): string[] {
  return Array.isArray(body.tools) ? body.tools.flatMap((tool: { name?: unknown }) => (typeof tool.name === 'string' ? [tool.name] : [])) : [];
}

/** The closing text of a host-tool run: each result as the model got it, so a test sees the tools' outputs reached it. */
export function hostToolAnswer(results: readonly string[]): string {
  return `The tools answered: ${results.join(' | ')}`;
}

/** What the model does next in a host-tool run: the next call, or text once every call has its result. */
function hostToolStep(body: Body, calls: readonly HostToolScenarioCall[]): { index: number; call: HostToolScenarioCall } | { text: string } {
  const results = toolResults(body);
  if (results.length >= calls.length) return { text: hostToolAnswer(results) };
  const call = calls[results.length]!;
  if (!offeredTools(body).includes(call.name)) return { text: `No tool named ${call.name} was offered.` };
  return { index: results.length, call };
}

/** The conversation already carries a tool result: this is the turn after the tool ran. */
function afterTool(body: Body): boolean {
  const text = JSON.stringify(body.messages ?? body.input ?? []);
  return text.includes('"tool_result"') || text.includes('"function_call_output"');
}

function deltas(text: string): string[] {
  const out: string[] = [];
  for (let at = 0; at < text.length; at += DELTA_CHARS) out.push(text.slice(at, at + DELTA_CHARS));
  return out;
}

function sse(res: ServerResponse, events: readonly { type: string }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
  res.end();
}

function fail(res: ServerResponse, status: number, body: unknown): void {
  // A short retry-after keeps the SDKs' own retries (they retry 429 and 5xx) quick.
  res.writeHead(status, { 'content-type': 'application/json', 'retry-after-ms': '5' });
  res.end(JSON.stringify(body));
}

function anthropic(res: ServerResponse, body: Body, scenario: Scenario, key: string | undefined): void {
  const error = (status: number, type: string, message: string) => fail(res, status, { type: 'error', error: { type, message }, request_id: 'req_double' });
  if (scenario.kind === 'invalid-key' || key === undefined) return error(401, 'authentication_error', 'invalid x-api-key');
  if (scenario.kind === 'rate-limit') return error(429, 'rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit');
  if (scenario.kind === 'overloaded') return error(529, 'overloaded_error', 'Overloaded');
  const model = body.model ?? 'claude-sonnet-4-6';
  const usage = { input_tokens: 25, output_tokens: 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 5, cache_creation: null, inference_geo: null, server_tool_use: null, service_tier: 'standard' as const };
  const events: RawMessageStreamEvent[] = [
    { type: 'message_start', message: { id: 'msg_double_1', type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, stop_details: null, container: null, usage } },
  ];
  const prompt = lastUserText(body);
  const text = (index: number, value: string) => {
    events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '', citations: null } });
    for (const piece of deltas(value)) events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    events.push({ type: 'content_block_stop', index });
  };
  let stop: 'end_turn' | 'tool_use' = 'end_turn';
  const toolUse = (id: string, name: string, input: string) => {
    events.push({ type: 'content_block_start', index: 1, content_block: { type: 'tool_use', id, name, input: {}, caller: { type: 'direct' } } });
    for (const partial_json of [input.slice(0, 5), input.slice(5)].filter((piece) => piece !== '')) events.push({ type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json } });
    events.push({ type: 'content_block_stop', index: 1 });
    stop = 'tool_use';
  };
  if (scenario.kind === 'api-error') {
    events.push({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '', citations: null } });
    events.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Let me think' } });
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const event of events) res.write(`event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`);
    // Anthropic's mid-stream failure: an `error` event, then the stream ends.
    res.end(`event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'api_error', message: 'Internal server error' } })}\n\n`);
    return;
  }
  if (scenario.kind === 'long') text(0, answerText(prompt, scenario.chars));
  else if (scenario.kind === 'host-tool') {
    const step = hostToolStep(body, scenario.calls);
    if ('text' in step) text(0, step.text);
    else {
      text(0, `I will call ${step.call.name}.`);
      toolUse(`toolu_double_host_${step.index}`, step.call.name, JSON.stringify(step.call.input));
    }
  } else if (afterTool(body)) text(0, answerText(prompt));
  else {
    text(0, 'I will list the files.');
    toolUse('toolu_double_1', TOOL_NAME, JSON.stringify({ path: '.' }));
  }
  events.push({
    type: 'message_delta',
    delta: { stop_reason: stop, stop_sequence: null, stop_details: null, container: null },
    usage: { input_tokens: 25, output_tokens: 40, cache_creation_input_tokens: 0, cache_read_input_tokens: 5, server_tool_use: null },
  });
  events.push({ type: 'message_stop' });
  sse(res, events);
}

function openai(res: ServerResponse, body: Body, scenario: Scenario, key: string | undefined): void {
  const error = (status: number, message: string, type: string, code: string | null) => fail(res, status, { error: { message, type, param: null, code } });
  if (scenario.kind === 'invalid-key' || key === undefined) {
    return error(401, 'Incorrect API key provided: sk-dummy. You can find your API key at https://platform.openai.com/account/api-keys.', 'invalid_request_error', 'invalid_api_key');
  }
  if (scenario.kind === 'rate-limit') return error(429, 'Rate limit reached for gpt-5.1 in organization org-double on requests per min (RPM): Limit 3, Used 3.', 'requests', 'rate_limit_exceeded');
  if (scenario.kind === 'overloaded') return error(503, 'The engine is currently overloaded, please try again later', 'server_error', null);
  const model = body.model ?? 'gpt-5.1';
  const response = (status: OpenAiResponse['status'], output: OpenAiResponse['output'], extra: Partial<OpenAiResponse> = {}): OpenAiResponse => ({
    id: 'resp_double_1',
    object: 'response',
    created_at: 1_764_000_000,
    status,
    model,
    output,
    output_text: '',
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: null,
    parallel_tool_calls: true,
    temperature: null,
    tool_choice: 'auto',
    tools: [],
    top_p: null,
    ...extra,
  });
  let seq = 0;
  const events: ResponseStreamEvent[] = [
    { type: 'response.created', sequence_number: seq++, response: response('in_progress', []) },
    { type: 'response.in_progress', sequence_number: seq++, response: response('in_progress', []) },
  ];
  const prompt = lastUserText(body);
  const message = (value: string, output_index = 0) => {
    const item = { id: `msg_double_${output_index}`, type: 'message' as const, role: 'assistant' as const, status: 'in_progress' as const, content: [] };
    events.push({ type: 'response.output_item.added', sequence_number: seq++, output_index, item });
    events.push({ type: 'response.content_part.added', sequence_number: seq++, output_index, item_id: item.id, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
    for (const delta of deltas(value)) events.push({ type: 'response.output_text.delta', sequence_number: seq++, output_index, item_id: item.id, content_index: 0, delta, logprobs: [] });
    events.push({ type: 'response.output_text.done', sequence_number: seq++, output_index, item_id: item.id, content_index: 0, text: value, logprobs: [] });
    const part = { type: 'output_text' as const, text: value, annotations: [] };
    events.push({ type: 'response.content_part.done', sequence_number: seq++, output_index, item_id: item.id, content_index: 0, part });
    const done = { ...item, status: 'completed' as const, content: [part] };
    events.push({ type: 'response.output_item.done', sequence_number: seq++, output_index, item: done });
    return done;
  };
  if (scenario.kind === 'api-error') {
    events.push({ type: 'error', sequence_number: seq++, code: 'server_error', message: 'The server had an error while processing your request.', param: null });
    return sse(res, events);
  }
  const output: OpenAiResponse['output'] = [];
  const functionCall = (suffix: string, name: string, args: string) => {
    const call = { id: `fc_double_${suffix}`, type: 'function_call' as const, call_id: `call_double_${suffix}`, name, arguments: '', status: 'in_progress' as const };
    events.push({ type: 'response.output_item.added', sequence_number: seq++, output_index: 1, item: call });
    for (const delta of [args.slice(0, 5), args.slice(5)].filter((piece) => piece !== '')) events.push({ type: 'response.function_call_arguments.delta', sequence_number: seq++, output_index: 1, item_id: call.id, delta });
    events.push({ type: 'response.function_call_arguments.done', sequence_number: seq++, output_index: 1, item_id: call.id, name, arguments: args });
    const done = { ...call, arguments: args, status: 'completed' as const };
    events.push({ type: 'response.output_item.done', sequence_number: seq++, output_index: 1, item: done });
    output.push(done);
  };
  if (scenario.kind === 'long') output.push(message(answerText(prompt, scenario.chars)));
  else if (scenario.kind === 'host-tool') {
    const step = hostToolStep(body, scenario.calls);
    if ('text' in step) output.push(message(step.text));
    else {
      output.push(message(`I will call ${step.call.name}.`));
      functionCall(`host_${step.index}`, step.call.name, JSON.stringify(step.call.input));
    }
  } else if (afterTool(body)) output.push(message(answerText(prompt)));
  else {
    output.push(message('I will list the files.'));
    functionCall('1', TOOL_NAME, JSON.stringify({ path: '.' }));
  }
  const usage = { input_tokens: 30, input_tokens_details: { cached_tokens: 10, cache_write_tokens: 0 }, output_tokens: 45, output_tokens_details: { reasoning_tokens: 5 }, total_tokens: 75 };
  events.push({ type: 'response.completed', sequence_number: seq++, response: response('completed', output, { usage }) });
  sse(res, events);
}

async function readBody(req: IncomingMessage): Promise<Body> {
  let text = '';
  for await (const data of req) text += String(data);
  return text === '' ? {} : (JSON.parse(text) as Body);
}

export async function startProviderDouble(): Promise<ProviderDouble> {
  const requests: ProviderDouble['requests'] = [];
  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const path = new URL(req.url ?? '/', 'http://double').pathname;
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const key = typeof req.headers['x-api-key'] === 'string' ? req.headers['x-api-key'] : bearer;
      requests.push({ path, key });
      const scenario = scenarioOf(lastUserText(body));
      if (req.method === 'POST' && path === '/v1/messages') anthropic(res, body, scenario, key);
      else if (req.method === 'POST' && path === '/v1/responses') openai(res, body, scenario, key);
      else fail(res, 404, { error: { message: `no route ${req.method} ${path}`, type: 'not_found' } });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
