import type { ModelMessage } from '@tanstack/ai';
import { HARNESS_NAMES, isHarnessName, parseHarnessOptions, type HarnessName } from './harness.ts';
import { THREAD_ID_PATTERN, isRunId, isThreadId } from './ids.ts';
import { parseMessages } from './messages.ts';
import { ProtocolError } from './errors.ts';
import { isObject } from './json.ts';

/** SPEC: a `POST /runs` body is at most 1 MiB. */
export const MAX_CREATE_RUN_BYTES = 1_048_576;

/** `POST /runs`, after validation: `prompt` is folded into `messages`. */
export interface CreateRunInput {
  messages: ModelMessage[];
  threadId?: string;
  harness: HarnessName;
  model?: string;
  harnessOptions?: Record<string, unknown>;
}

/** Thrown for a known field with an unknown harness, so the API can answer `unknown_harness`. */
export class UnknownHarnessError extends ProtocolError {}

const CREATE_RUN_FIELDS = ['prompt', 'messages', 'threadId', 'harness', 'model', 'harnessOptions'];

export function parseCreateRunBody(value: unknown, defaultHarness: HarnessName): CreateRunInput {
  if (!isObject(value)) throw new ProtocolError('body', 'expected a JSON object');
  for (const key of Object.keys(value)) {
    if (!CREATE_RUN_FIELDS.includes(key)) throw new ProtocolError(key, `unknown field (known: ${CREATE_RUN_FIELDS.join(', ')})`);
  }
  const { prompt, messages, threadId, harness, model, harnessOptions } = value;
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
  const chosen = harness ?? defaultHarness;
  if (!isHarnessName(chosen)) throw new UnknownHarnessError('harness', `unknown harness ${JSON.stringify(chosen)} (known: ${HARNESS_NAMES.join(', ')})`);
  if (model !== undefined && (typeof model !== 'string' || model === '' || model.length > 200)) throw new ProtocolError('model', 'expected a non-empty string of at most 200 characters');
  const input: CreateRunInput = { messages: parsedMessages, harness: chosen };
  if (threadId !== undefined) input.threadId = threadId;
  if (model !== undefined) input.model = model;
  const options = parseHarnessOptions(chosen, harnessOptions);
  if (options !== undefined) input.harnessOptions = options;
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
  /** Working directory inside the container, when the harness works on files. */
  workspace?: string;
}

export function parseRunnerRunRequest(value: unknown): RunnerRunRequest {
  if (!isObject(value)) throw new ProtocolError('body', 'expected a JSON object');
  const { runId, threadId, messages, harness, model, harnessOptions, workspace } = value;
  if (typeof runId !== 'string' || !/^[A-Za-z0-9_-]{1,128}$/.test(runId)) throw new ProtocolError('runId', 'expected a string of [A-Za-z0-9_-], 1 to 128 long');
  if (!isThreadId(threadId)) throw new ProtocolError('threadId', `expected a string matching ${THREAD_ID_PATTERN}`);
  if (!isHarnessName(harness)) throw new UnknownHarnessError('harness', `unknown harness ${JSON.stringify(harness)} (known: ${HARNESS_NAMES.join(', ')})`);
  const request: RunnerRunRequest = { runId, threadId, messages: parseMessages(messages), harness };
  if (model !== undefined) {
    if (typeof model !== 'string' || model === '') throw new ProtocolError('model', 'expected a non-empty string');
    request.model = model;
  }
  const options = parseHarnessOptions(harness, harnessOptions);
  if (options !== undefined) request.harnessOptions = options;
  if (workspace !== undefined) {
    if (typeof workspace !== 'string' || !workspace.startsWith('/')) throw new ProtocolError('workspace', 'expected an absolute path');
    request.workspace = workspace;
  }
  return request;
}

export { isRunId };
