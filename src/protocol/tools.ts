import type { StreamChunk } from '@tanstack/ai';
import { ProtocolError } from './errors.ts';
import { isObject, ownRecord } from './json.ts';

/**
 * SPEC "Workspace and host tools": the app's own tools, given to a run at
 * `POST /runs` and callable by every harness. The harness never executes
 * one: it asks (a `tool-input-available` chunk in the log), the run object
 * executes it (a signed webhook, or a person's answer for a `client` tool),
 * stores the outcome, then hands it to the runner, which hands it to the
 * harness. The runner is told each tool's name, description and schema only,
 * never where a webhook lives.
 */

export const MAX_TOOLS = 32;
/** Claude Code sees a bridged tool as `mcp__tanstack__<name>`; this keeps it within the 64 characters MCP clients allow. */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,47}$/;
export const MAX_TOOL_DESCRIPTION_CHARS = 4_096;
/** Bytes of JSON text of one tool's `inputSchema`. */
export const MAX_TOOL_SCHEMA_CHARS = 32_768;
const MAX_URL_CHARS = 2_048;

export type ToolExecute = { type: 'webhook'; url: string } | { type: 'client' };

/** A tool as `POST /runs` gives it and the run object keeps it. */
export interface ToolSpec {
  name: string;
  description: string;
  /** A JSON Schema object (`type: 'object'`), checked at `POST /runs` and applied to every call's input. */
  inputSchema: Record<string, unknown>;
  execute: ToolExecute;
}

/** What the runner gets of a tool: enough to advertise it to a model, nothing about where it runs. */
export interface ToolDescriptor {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /**
   * A person answers it (`execute: {type: 'client'}`): its request chunk says
   * so, for a UI to show a card. Only a hint to readers: the run object goes
   * by its own copy of the tools.
   */
  client?: true;
}

export interface ToolPolicy {
  /** `TOOL_WEBHOOK_ORIGINS`, as URL origins. */
  webhookOrigins: readonly string[];
  /** Auth off (a developer's machine, the tests): loopback `http://` origins may be called. */
  allowLoopbackHttp: boolean;
  /** `TOOL_WEBHOOK_SECRET` is set: without it no webhook request could be signed. */
  webhookSecretSet: boolean;
}

/** A webhook whose origin is not allowed, or webhooks on a relay that cannot sign them: `tool_not_allowed`. */
export class ToolNotAllowedError extends ProtocolError {}

const TOOL_FIELDS = ['name', 'description', 'inputSchema', 'execute'];
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

function onlyFields(record: Record<string, unknown>, known: string[], path: string): void {
  for (const key of Object.keys(record)) {
    if (!known.includes(key)) throw new ProtocolError(`${path}.${key}`, `unknown field (known: ${known.join(', ')})`);
  }
}

/** An origin allowed by this policy's scheme rule: https, or loopback http with auth off. */
export function isCallableOrigin(url: URL, allowLoopbackHttp: boolean): boolean {
  if (url.protocol === 'https:') return url.hostname !== '';
  return url.protocol === 'http:' && allowLoopbackHttp && LOOPBACK_HOSTS.has(url.hostname);
}

/**
 * The SSRF guard, applied at `POST /runs` and again before every call (the
 * configuration may have changed since): the URL's origin is listed in
 * `TOOL_WEBHOOK_ORIGINS`, its scheme is callable, and it carries no
 * credentials. Returns the reason it is not allowed, or `null`.
 */
export function webhookRefusal(raw: string, policy: Pick<ToolPolicy, 'webhookOrigins' | 'allowLoopbackHttp'>): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'expected an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'a webhook URL may not carry credentials';
  if (!isCallableOrigin(url, policy.allowLoopbackHttp)) {
    return policy.allowLoopbackHttp ? 'expected an https:// URL (or a loopback http:// one)' : 'expected an https:// URL (loopback http:// is allowed only with auth off)';
  }
  if (!policy.webhookOrigins.includes(url.origin)) {
    return policy.webhookOrigins.length === 0
      ? `${url.origin} is not allowed: the relay's TOOL_WEBHOOK_ORIGINS is empty, so no webhook tool may be called`
      : `${url.origin} is not listed in the relay's TOOL_WEBHOOK_ORIGINS`;
  }
  return null;
}

/**
 * The JSON Schema's shape, as far as a model and a validator need it: an
 * object schema whose `properties` are schemas and whose `required` names are
 * strings. Whether every keyword is meaningful is the validator's business
 * (it runs on each call, in the run object).
 */
function parseInputSchema(value: unknown, path: string): Record<string, unknown> {
  const schema = ownRecord(value, path);
  if (JSON.stringify(schema).length > MAX_TOOL_SCHEMA_CHARS) throw new ProtocolError(path, `expected a JSON Schema of at most ${MAX_TOOL_SCHEMA_CHARS} characters of JSON`);
  if (schema.type !== 'object') throw new ProtocolError(`${path}.type`, "expected 'object': a tool's input is a JSON object");
  if (schema.properties !== undefined) {
    const properties = ownRecord(schema.properties, `${path}.properties`);
    for (const [key, property] of Object.entries(properties)) {
      if (typeof property !== 'boolean' && !isObject(property)) throw new ProtocolError(`${path}.properties.${key}`, 'expected a JSON Schema (an object or a boolean)');
    }
  }
  if (schema.required !== undefined && (!Array.isArray(schema.required) || !schema.required.every((name) => typeof name === 'string'))) {
    throw new ProtocolError(`${path}.required`, 'expected an array of property names');
  }
  return schema;
}

/** `policy` null: stored tools read back, checked for shape only (the policy was applied at `POST /runs`, and is again before each call). */
function parseExecute(value: unknown, path: string, policy: ToolPolicy | null): ToolExecute {
  const execute = ownRecord(value, path);
  if (execute.type === 'client') {
    onlyFields(execute, ['type'], path);
    return { type: 'client' };
  }
  if (execute.type !== 'webhook') throw new ProtocolError(`${path}.type`, "expected 'webhook' or 'client'");
  onlyFields(execute, ['type', 'url'], path);
  if (typeof execute.url !== 'string' || execute.url.length > MAX_URL_CHARS) throw new ProtocolError(`${path}.url`, `expected a URL string of at most ${MAX_URL_CHARS} characters`);
  if (policy === null) return { type: 'webhook', url: execute.url };
  const refusal = webhookRefusal(execute.url, policy);
  if (refusal !== null) throw new ToolNotAllowedError(`${path}.url`, refusal);
  if (!policy.webhookSecretSet) throw new ToolNotAllowedError(`${path}.url`, 'the relay has no TOOL_WEBHOOK_SECRET, so it cannot sign webhook requests; its operator must set one');
  return { type: 'webhook', url: execute.url };
}

function parseTool(value: unknown, path: string, policy: ToolPolicy | null): ToolSpec {
  const tool = ownRecord(value, path);
  onlyFields(tool, TOOL_FIELDS, path);
  if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name)) throw new ProtocolError(`${path}.name`, `expected a name matching ${TOOL_NAME_PATTERN}`);
  const description = tool.description ?? '';
  if (typeof description !== 'string' || description.length > MAX_TOOL_DESCRIPTION_CHARS) {
    throw new ProtocolError(`${path}.description`, `expected a string of at most ${MAX_TOOL_DESCRIPTION_CHARS} characters`);
  }
  return { name: tool.name, description, inputSchema: parseInputSchema(tool.inputSchema, `${path}.inputSchema`), execute: parseExecute(tool.execute, `${path}.execute`, policy) };
}

/** Parse, don't cast: at most `MAX_TOOLS`, unique names, allowed webhook origins only. */
export function parseTools(value: unknown, policy: ToolPolicy | null, path = 'tools'): ToolSpec[] {
  if (!Array.isArray(value) || value.length > MAX_TOOLS) throw new ProtocolError(path, `expected an array of at most ${MAX_TOOLS} tools`);
  const names = new Set<string>();
  return value.map((item, i) => {
    const tool = parseTool(item, `${path}[${i}]`, policy);
    if (names.has(tool.name)) throw new ProtocolError(`${path}[${i}].name`, `${tool.name} is given twice; tool names are unique within a run`);
    names.add(tool.name);
    return tool;
  });
}

/** Stored tools, read back: the shape again, no policy. */
export function parseStoredTools(value: unknown, path = 'tools'): ToolSpec[] {
  return parseTools(value, null, path);
}

export function toolDescriptors(tools: readonly ToolSpec[]): ToolDescriptor[] {
  return tools.map(({ name, description, inputSchema, execute }) => ({ name, description, inputSchema, ...(execute.type === 'client' ? { client: true as const } : {}) }));
}

/** The runner's copy: names, descriptions and schemas, shape checked again. */
export function parseToolDescriptors(value: unknown, path = 'tools'): ToolDescriptor[] {
  if (!Array.isArray(value) || value.length > MAX_TOOLS) throw new ProtocolError(path, `expected an array of at most ${MAX_TOOLS} tools`);
  const names = new Set<string>();
  return value.map((item, i) => {
    const tool = ownRecord(item, `${path}[${i}]`);
    onlyFields(tool, ['name', 'description', 'inputSchema', 'client'], `${path}[${i}]`);
    if (typeof tool.name !== 'string' || !TOOL_NAME_PATTERN.test(tool.name) || names.has(tool.name)) throw new ProtocolError(`${path}[${i}].name`, `expected a unique name matching ${TOOL_NAME_PATTERN}`);
    names.add(tool.name);
    if (typeof tool.description !== 'string') throw new ProtocolError(`${path}[${i}].description`, 'expected a string');
    if (tool.client !== undefined && tool.client !== true) throw new ProtocolError(`${path}[${i}].client`, 'expected true or nothing');
    const descriptor: ToolDescriptor = { name: tool.name, description: tool.description, inputSchema: parseInputSchema(tool.inputSchema, `${path}[${i}].inputSchema`) };
    if (tool.client === true) descriptor.client = true;
    return descriptor;
  });
}

/**
 * The chunk a harness writes when it calls a host tool, after the call's
 * `TOOL_CALL_START/ARGS/END`: TanStack AI's own `CUSTOM` event for "this
 * call's input is complete and is executed outside the model loop" (its
 * `ChatClient` fires `onToolCall` for it). Being in the log is what makes
 * the request durable: the run object acts on it once it is stored.
 */
export const HOST_TOOL_CALL_EVENT = 'tool-input-available';

export interface HostToolCall {
  toolCallId: string;
  toolName: string;
  input: unknown;
  /** A person is to answer it (a client tool); see `ToolDescriptor.client`. */
  client?: true;
  /**
   * The call is about the harness's own action in its sandbox (an approval),
   * not a tool its model was offered: the transcript marks it
   * `sandboxObserved`, so no later turn replays it to a provider.
   */
  sandboxObserved?: true;
}

/** Ids the harnesses and models use (`toolu_…`, `call_…`, the demo's `<runId>-tool-…`), and nothing that could break a header. */
export const TOOL_CALL_ID_PATTERN = /^[A-Za-z0-9_.:-]{1,200}$/;

export function hostToolCallChunk(call: HostToolCall, timestamp = Date.now()): StreamChunk {
  const value = { toolCallId: call.toolCallId, toolName: call.toolName, input: call.input, ...(call.client ? { client: true } : {}), ...(call.sandboxObserved ? { sandboxObserved: true } : {}) };
  return { type: 'CUSTOM', name: HOST_TOOL_CALL_EVENT, value, timestamp } as StreamChunk;
}

/** The host tool call a stored chunk asks for, or `null` for every other chunk (or a malformed one). */
export function hostToolCallOf(chunk: unknown): HostToolCall | null {
  if (!isObject(chunk) || chunk.type !== 'CUSTOM') return null;
  const { name, value } = chunk;
  if (name !== HOST_TOOL_CALL_EVENT || !isObject(value)) return null;
  const { toolCallId, toolName, input, client, sandboxObserved } = value;
  if (typeof toolCallId !== 'string' || !TOOL_CALL_ID_PATTERN.test(toolCallId) || typeof toolName !== 'string') return null;
  const call: HostToolCall = { toolCallId, toolName, input };
  if (client === true) call.client = true;
  if (sandboxObserved === true) call.sandboxObserved = true;
  return call;
}

/**
 * A tool call's outcome, as the run object hands it to the runner and the
 * runner to the harness: the tool's `output` (any JSON), or an `error` the
 * harness shows its model as a failed call (the run goes on).
 */
export type ToolOutcome = { output: unknown } | { error: string };

export interface ToolResult {
  toolCallId: string;
  outcome: ToolOutcome;
}

/**
 * The largest tool outcome taken, as JSON (a webhook's answer, a client's
 * body or frame): the harness writes it back as one `TOOL_CALL_RESULT`
 * chunk, and a chunk is at most 1 MiB (`RUNNER_MAX_LINE_BYTES`).
 */
export const MAX_TOOL_RESULT_BYTES = 512 * 1024;

/** The longest error text kept; a model needs the gist, the log needs no megabyte. */
export const MAX_TOOL_ERROR_CHARS = 4_096;

function errorText(value: unknown): string {
  const text = typeof value === 'string' ? value : isObject(value) && typeof value.message === 'string' ? value.message : JSON.stringify(value);
  return text.length > MAX_TOOL_ERROR_CHARS ? `${text.slice(0, MAX_TOOL_ERROR_CHARS)}…` : text;
}

/** `{output}` or `{error}` (a string, or an object with a `message`): a webhook's answer, a client's, the runner's body. */
export function parseToolOutcome(record: Record<string, unknown>, path: string): ToolOutcome {
  const hasOutput = Object.hasOwn(record, 'output');
  const hasError = Object.hasOwn(record, 'error') && record.error !== undefined && record.error !== null;
  if (hasOutput === hasError) throw new ProtocolError(path, 'expected exactly one of output or error');
  return hasError ? { error: errorText(record.error) } : { output: record.output ?? null };
}

/** `POST /runs/:runId/tool-results` on the runner (and, for client tools, on the API): `{toolCallId, output}` or `{toolCallId, error}`. */
export function parseToolResult(value: unknown, path = 'body', extra: readonly string[] = []): ToolResult {
  const body = ownRecord(value, path);
  onlyFields(body, ['toolCallId', 'output', 'error', ...extra], path);
  if (typeof body.toolCallId !== 'string' || !TOOL_CALL_ID_PATTERN.test(body.toolCallId)) throw new ProtocolError(`${path}.toolCallId`, `expected a tool call id matching ${TOOL_CALL_ID_PATTERN}`);
  return { toolCallId: body.toolCallId, outcome: parseToolOutcome(body, path) };
}

/** What the runner answers for a tool result: `delivered` false when the call was answered already (first answer wins). */
export interface RunnerToolResultAnswer {
  delivered: boolean;
}

/** Why a client tool call's answer was not taken; the same over HTTP and over the WebSocket. */
export type ToolAnswerRefusal = 'already_answered' | 'unknown_call' | 'run_finished';

/** SPEC: later answers `409 already_answered`; an unknown call `404`; a terminal run `409 run_finished`. */
export function toolAnswerRefusal(kind: ToolAnswerRefusal, toolCallId: string): { status: 404 | 409; code: 'already_answered' | 'tool_call_not_found' | 'run_finished'; message: string } {
  switch (kind) {
    case 'already_answered':
      return { status: 409, code: 'already_answered', message: `Tool call ${toolCallId} was answered already (the first answer wins); this one was not used.` };
    case 'unknown_call':
      return { status: 404, code: 'tool_call_not_found', message: `This run has no client tool call ${toolCallId} (see pendingToolCalls on GET /runs/:runId).` };
    case 'run_finished':
      return { status: 409, code: 'run_finished', message: `The run has ended, so tool call ${toolCallId} can no longer be answered.` };
  }
}

/** `POST /runs/:runId/attach-token`'s optional body: `{"respond": true}` asks for a token that may answer tool calls. */
export function parseAttachTokenRequest(value: unknown): { respond: boolean } {
  const body = ownRecord(value, 'body');
  onlyFields(body, ['respond'], 'body');
  if (body.respond !== undefined && typeof body.respond !== 'boolean') throw new ProtocolError('body.respond', 'expected true or false');
  return { respond: body.respond === true };
}
