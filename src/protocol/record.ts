import type { RunError, RunRecord } from '@tanstack/ai';
import { ProtocolError } from './errors.ts';
import { isObject, ownRecord } from './json.ts';

/**
 * The run record as the API serves it: core's `RunRecord` plus the log's
 * cursor (`lastSeq`, `-1` before the first chunk) and the activity clock
 * (`updatedAt`, epoch ms of the last write of any kind). Its `usage` is in
 * AG-UI 1.0's names (SPEC), not core's `TokenUsage` (`promptTokens`, …).
 */
export type RunView = Omit<RunRecord, 'usage'> & { lastSeq: number; updatedAt: number; usage?: RunUsage; pendingToolCalls?: PendingToolCall[] };

/**
 * SPEC "Interactive runs": a client tool call waiting for its answer. The
 * run stays `running`; only this call waits.
 */
export interface PendingToolCall {
  toolCallId: string;
  name: string;
  /** A tool's input is a JSON object (its schema says `type: 'object'`). */
  input: object;
  requestedAt: number;
}

function parsePendingToolCalls(value: unknown, path: string): PendingToolCall[] {
  if (!Array.isArray(value)) throw new ProtocolError(path, 'expected an array');
  return value.map((item, i) => {
    const call = ownRecord(item, `${path}[${i}]`);
    return { toolCallId: requireString(call, 'toolCallId', `${path}[${i}]`), name: requireString(call, 'name', `${path}[${i}]`), input: isObject(call.input) ? call.input : {}, requestedAt: requireInt(call, 'requestedAt', `${path}[${i}]`, 0) };
  });
}

/**
 * What a completed run's `RUN_FINISHED` reported it used (SPEC "Harness
 * chunks: one dialect"): AG-UI 1.0's token counts, summed over its entries
 * (one per provider and model). Cache fields only where the harness reports them.
 */
export interface RunUsage {
  inputTokens: number;
  outputTokens: number;
  /** Part of `inputTokens`: read from the provider's prompt cache. */
  cachedInputTokens?: number;
  /** Part of `inputTokens`: written to the provider's prompt cache. */
  cacheWriteInputTokens?: number;
}

const USAGE_FIELDS = ['inputTokens', 'outputTokens', 'cachedInputTokens', 'cacheWriteInputTokens'] as const;

export function parseRunUsage(value: unknown, path = 'usage'): RunUsage {
  const usage = ownRecord(value, path);
  const usageView: RunUsage = { inputTokens: requireInt(usage, 'inputTokens', path, 0), outputTokens: requireInt(usage, 'outputTokens', path, 0) };
  if (usage.cachedInputTokens !== undefined) usageView.cachedInputTokens = requireInt(usage, 'cachedInputTokens', path, 0);
  if (usage.cacheWriteInputTokens !== undefined) usageView.cacheWriteInputTokens = requireInt(usage, 'cacheWriteInputTokens', path, 0);
  return usageView;
}

/**
 * The usage a `RUN_FINISHED` chunk carries, as the record keeps it; `undefined`
 * when it reports none. Entries that are not AG-UI token usage are skipped.
 */
export function usageOfRunFinished(chunk: unknown): RunUsage | undefined {
  const entries = isObject(chunk) && chunk.type === 'RUN_FINISHED' && Array.isArray(chunk.usage) ? chunk.usage : [];
  let total: Record<(typeof USAGE_FIELDS)[number], number | undefined> | undefined;
  for (const entry of entries) {
    if (!isObject(entry)) continue;
    total ??= { inputTokens: 0, outputTokens: 0, cachedInputTokens: undefined, cacheWriteInputTokens: undefined };
    for (const field of USAGE_FIELDS) {
      const count = entry[field];
      if (typeof count === 'number' && Number.isSafeInteger(count) && count >= 0) total[field] = (total[field] ?? 0) + count;
    }
  }
  if (total === undefined) return undefined;
  const usage: RunUsage = { inputTokens: total.inputTokens ?? 0, outputTokens: total.outputTokens ?? 0 };
  if (total.cachedInputTokens !== undefined) usage.cachedInputTokens = total.cachedInputTokens;
  if (total.cacheWriteInputTokens !== undefined) usage.cacheWriteInputTokens = total.cacheWriteInputTokens;
  return usage;
}

/** The statuses this relay writes. Core's `interrupted` is never produced here. */
export const RUN_STATUSES = ['running', 'completed', 'failed', 'aborted'] as const satisfies ReadonlyArray<RunRecord['status']>;
export type RelayRunStatus = (typeof RUN_STATUSES)[number];

export function isRelayRunStatus(value: unknown): value is RelayRunStatus {
  return typeof value === 'string' && (RUN_STATUSES as readonly string[]).includes(value);
}


function requireInt(obj: Record<string, unknown>, key: string, path: string, min: number): number {
  const value = obj[key];
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    throw new ProtocolError(`${path}.${key}`, `expected an integer >= ${min}`);
  }
  return value;
}

function requireString(obj: Record<string, unknown>, key: string, path: string): string {
  const value = obj[key];
  if (typeof value !== 'string' || value === '') throw new ProtocolError(`${path}.${key}`, 'expected a non-empty string');
  return value;
}

export function parseRunError(value: unknown, path = 'error'): RunError {
  const error = isObject(value) ? ownRecord(value, path) : undefined;
  if (error === undefined || typeof error.message !== 'string') {
    throw new ProtocolError(path, 'expected {message, code?}');
  }
  if (error.code !== undefined && typeof error.code !== 'string') throw new ProtocolError(`${path}.code`, 'expected a string');
  return error.code === undefined ? { message: error.message } : { message: error.message, code: error.code };
}

/** Parse, don't cast: validates a record arriving from storage, RPC or the wire. */
export function parseRunView(input: unknown, path = 'record'): RunView {
  const value = ownRecord(input, path);
  const status = value.status;
  if (!isRelayRunStatus(status)) throw new ProtocolError(`${path}.status`, `expected one of ${RUN_STATUSES.join(', ')}`);
  const view: RunView = {
    runId: requireString(value, 'runId', path),
    threadId: requireString(value, 'threadId', path),
    status,
    lastSeq: requireInt(value, 'lastSeq', path, -1),
    startedAt: requireInt(value, 'startedAt', path, 0),
    updatedAt: requireInt(value, 'updatedAt', path, 0),
  };
  if (value.finishedAt !== undefined) view.finishedAt = requireInt(value, 'finishedAt', path, 0);
  if (value.error !== undefined) view.error = parseRunError(value.error, `${path}.error`);
  if (value.usage !== undefined) view.usage = parseRunUsage(value.usage, `${path}.usage`);
  if (value.pendingToolCalls !== undefined) view.pendingToolCalls = parsePendingToolCalls(value.pendingToolCalls, `${path}.pendingToolCalls`);
  return view;
}
