import type { RunError, RunRecord } from '@tanstack/ai';
import { ProtocolError } from './errors.ts';
import { isObject, ownRecord } from './json.ts';

/**
 * The run record as the API serves it: core's `RunRecord` plus the log's
 * cursor (`lastSeq`, `-1` before the first chunk) and the activity clock
 * (`updatedAt`, epoch ms of the last write of any kind).
 */
export type RunView = RunRecord & { lastSeq: number; updatedAt: number };

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
  return view;
}
