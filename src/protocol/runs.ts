import type { ModelMessage } from '@tanstack/ai';
import { HARNESS_NAMES, HarnessOptionsError, isHarnessName, parseHarnessOptions, type HarnessName, type ParseOptionsPolicy } from './harness.ts';
import { THREAD_ID_PATTERN, isRunId, isThreadId } from './ids.ts';
import { parseMessages } from './messages.ts';
import { ProtocolError } from './errors.ts';
import { isObject, ownRecord } from './json.ts';
import { parseToolDescriptors, parseTools, type ToolDescriptor, type ToolPolicy, type ToolSpec } from './tools.ts';
import { parseTrustedWorkspace, parseWorkspace, type WorkspacePolicy, type WorkspaceRequest } from './workspace.ts';

/** SPEC: a `POST /runs` body is at most 1 MiB. */
export const MAX_CREATE_RUN_BYTES = 1_048_576;

/** `POST /runs`, after validation: `prompt` is folded into `messages`. */
export interface CreateRunInput {
  messages: ModelMessage[];
  threadId?: string;
  harness: HarnessName;
  model?: string;
  harnessOptions?: Record<string, unknown>;
  workspace?: WorkspaceRequest;
  /** The app's own tools (SPEC "Workspace and host tools"). */
  tools?: ToolSpec[];
  /** `client`: the harness's permission prompts become `approve` client tool calls (SPEC "Interactive runs"). */
  approvals?: 'client';
}

/** The client tool an approval is asked through; its input is `{tool, input}`, its output `{behavior: 'allow' | 'deny', message?}`. */
export const APPROVAL_TOOL_NAME = 'approve';

/** The harnesses whose permission prompts can be answered by a person. */
export const APPROVAL_HARNESSES: readonly HarnessName[] = ['claude-code'];

/** How the relay keeps the approval tool among a run's tools: a client tool, never advertised to the model. */
export const APPROVAL_TOOL: ToolSpec = {
  name: APPROVAL_TOOL_NAME,
  description: 'Asks a person to allow or deny one action of the harness. Input {tool, input}; answer {behavior: "allow" | "deny", message?}.',
  inputSchema: { type: 'object', properties: { tool: { type: 'string' }, input: {} }, required: ['tool'] },
  execute: { type: 'client' },
};

/** Thrown for a known field with an unknown harness, so the API can answer `unknown_harness`. */
export class UnknownHarnessError extends ProtocolError {}

const CREATE_RUN_FIELDS = ['prompt', 'messages', 'threadId', 'harness', 'model', 'harnessOptions', 'workspace', 'tools', 'approvals'];

/** The harnesses that work on files in a directory; the demo and chat have none to clone into. */
export const WORKSPACE_HARNESSES: readonly HarnessName[] = ['claude-code', 'codex'];

/**
 * Model ids (`claude-sonnet-4-5`, `gpt-5.3-codex`, `anthropic/claude-…`, a
 * Bedrock ARN) fit this; a CLI adapter quotes the value, and this keeps
 * quotes, spaces and shell syntax out of it anyway.
 */
const MODEL_PATTERN = /^[A-Za-z0-9._:/@+-]{1,200}$/;

export function parseModel(value: unknown, path = 'model'): string {
  if (typeof value !== 'string' || !MODEL_PATTERN.test(value)) throw new ProtocolError(path, `expected a model id matching ${MODEL_PATTERN}`);
  return value;
}

export interface CreateRunPolicy extends ParseOptionsPolicy {
  defaultHarness: HarnessName;
  /** Unset: the strictest policy, no secrets and `https://` sources only. */
  workspace?: WorkspacePolicy;
  /** Unset: the strictest policy, no webhook is callable. */
  tools?: ToolPolicy;
}

/** Parse, don't cast: own properties only; a reserved key, an unknown field or a bad value is a `ProtocolError` naming it. */
export function parseCreateRunBody(value: unknown, policy: CreateRunPolicy): CreateRunInput {
  const body = ownRecord(value, 'body');
  for (const key of Object.keys(body)) {
    if (!CREATE_RUN_FIELDS.includes(key)) throw new ProtocolError(key, `unknown field (known: ${CREATE_RUN_FIELDS.join(', ')})`);
  }
  const { prompt, messages, threadId, harness, model, harnessOptions, workspace, tools, approvals } = body;
  if (prompt !== undefined && messages !== undefined) throw new ProtocolError('prompt', 'give either prompt or messages, not both');
  let parsedMessages: ModelMessage[];
  if (prompt !== undefined) {
    if (typeof prompt !== 'string' || prompt.trim() === '') throw new ProtocolError('prompt', 'expected a non-empty string');
    parsedMessages = [{ role: 'user', content: prompt }];
  } else if (messages !== undefined) {
    parsedMessages = parseMessages(messages);
  } else {
    throw new ProtocolError('prompt', 'one of prompt or messages is required');
  }
  if (threadId !== undefined && !isThreadId(threadId)) throw new ProtocolError('threadId', `expected a string matching ${THREAD_ID_PATTERN}`);
  const chosen = harness ?? policy.defaultHarness;
  if (!isHarnessName(chosen)) throw new UnknownHarnessError('harness', `unknown harness ${JSON.stringify(chosen)} (known: ${HARNESS_NAMES.join(', ')})`);
  const input: CreateRunInput = { messages: parsedMessages, harness: chosen };
  if (threadId !== undefined) input.threadId = threadId;
  if (model !== undefined) input.model = parseModel(model);
  const options = parseHarnessOptions(chosen, harnessOptions, policy);
  if (options !== undefined) input.harnessOptions = options;
  if (workspace !== undefined) {
    if (!WORKSPACE_HARNESSES.includes(chosen)) throw new ProtocolError('workspace', `the ${chosen} harness works on no files; a workspace is for ${WORKSPACE_HARNESSES.join(' and ')}`);
    input.workspace = parseWorkspace(workspace, policy.workspace ?? { allowedSecrets: [], allowLocalSources: false });
  }
  if (tools !== undefined) {
    const parsed = parseTools(tools, policy.tools ?? { webhookOrigins: [], allowLoopbackHttp: false, webhookSecretSet: false });
    if (parsed.length > 0) input.tools = parsed;
  }
  if (approvals !== undefined) {
    if (approvals !== 'client') throw new ProtocolError('approvals', "expected 'client' (a person answers the harness's permission prompts)");
    if (!APPROVAL_HARNESSES.includes(chosen)) throw new ProtocolError('approvals', `the ${chosen} harness asks no permission the relay can pass on; approvals are for ${APPROVAL_HARNESSES.join(', ')}`);
    if (input.tools?.some((tool) => tool.name === APPROVAL_TOOL_NAME)) throw new ProtocolError('approvals', `a run with approvals cannot have a tool of its own named ${APPROVAL_TOOL_NAME}`);
    input.approvals = 'client';
  }
  const scripted = input.harness === 'demo' ? (input.harnessOptions as { toolCalls?: { name: string }[] } | undefined)?.toolCalls : undefined;
  scripted?.forEach((call, i) => {
    if (!input.tools?.some((tool) => tool.name === call.name)) {
      throw new HarnessOptionsError(`harnessOptions.toolCalls[${i}].name`, `${call.name} is not one of this run's tools (${input.tools?.map((tool) => tool.name).join(', ') || 'it has none'})`);
    }
  });
  return input;
}

/** What the relay sends the runner: `POST /run`. Secrets are never part of it. */
export interface RunnerRunRequest {
  runId: string;
  threadId: string;
  messages: ModelMessage[];
  harness: HarnessName;
  model?: string;
  harnessOptions?: Record<string, unknown>;
  /** Set up by the runner before the harness starts; secret names only, their values are the runner's environment's. */
  workspace?: WorkspaceRequest;
  /**
   * Whose run this is (`null` with auth off). The runner derives the run's
   * workspace directory from a hash of (tenant, threadId), so two tenants
   * never share one; no path ever comes from the request.
   */
  tenant: string | null;
  /** The run's host tools as the harness advertises them; the run object executes every call. */
  tools?: ToolDescriptor[];
  /** `client`: the harness asks permission through the `approve` host tool call (not advertised to the model). */
  approvals?: 'client';
}

export function parseRunnerRunRequest(value: unknown): RunnerRunRequest {
  const body = ownRecord(value, 'body');
  const { runId, threadId, messages, harness, model, harnessOptions, tenant, workspace, tools, approvals } = body;
  if (typeof runId !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(runId)) throw new ProtocolError('runId', 'expected a string of [A-Za-z0-9_-], 1 to 128 long');
  if (!isThreadId(threadId)) throw new ProtocolError('threadId', `expected a string matching ${THREAD_ID_PATTERN}`);
  if (!isHarnessName(harness)) throw new UnknownHarnessError('harness', `unknown harness ${JSON.stringify(harness)} (known: ${HARNESS_NAMES.join(', ')})`);
  if (tenant !== null && (typeof tenant !== 'string' || tenant === '')) throw new ProtocolError('tenant', 'expected null or a non-empty string');
  // The thread's transcript so far: harness output the relay stored, bounded by the body size.
  const request: RunnerRunRequest = { runId, threadId, messages: parseMessages(messages, 'messages', { source: 'trusted', maxMessages: Number.POSITIVE_INFINITY }), harness, tenant };
  if (model !== undefined) request.model = parseModel(model);
  // The same schema as the API; the unsafe-options policy is the Worker's, which the runner trusts.
  const options = parseHarnessOptions(harness, harnessOptions, { allowUnsafe: true });
  if (options !== undefined) request.harnessOptions = options;
  if (workspace !== undefined) request.workspace = parseTrustedWorkspace(workspace);
  if (tools !== undefined) request.tools = parseToolDescriptors(tools);
  if (approvals !== undefined) {
    if (approvals !== 'client') throw new ProtocolError('approvals', "expected 'client'");
    request.approvals = 'client';
  }
  return request;
}

export { isRunId };
