import { ProtocolError } from './errors.ts';

/**
 * Parsing at every edge (requests, storage, runner lines) goes through here,
 * so no value can carry a prototype surprise: objects are copied, own
 * properties only, into null-prototype objects. On a null-prototype object
 * `__proto__` is an ordinary key, so a later `out[key] = value` cannot reach
 * `Object.prototype`, and an inherited property is never read as a field.
 */

/** Keys a request may never use, at any depth: they name or reach a prototype. */
export const RESERVED_KEYS = ['__proto__', 'constructor', 'prototype'] as const;

/** SPEC: JSON nested deeper than this is `400 invalid_body` (never a crash in a recursive consumer). */
export const MAX_JSON_DEPTH = 64;

export type JsonRecord = Record<string, unknown>;

/** Thrown for JSON nested deeper than allowed; a `ProtocolError`, so the API answers `invalid_body`. */
export class JsonDepthError extends ProtocolError {}

export function isReservedKey(key: string): boolean {
  return (RESERVED_KEYS as readonly string[]).includes(key);
}

/** A JSON object (not null, not an array): the first step of every parser here. */
export function isObject(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function fieldPath(path: string, key: string | number): string {
  return typeof key === 'number' ? `${path}[${key}]` : `${path}.${key}`;
}

/**
 * One object's own enumerable properties, copied into a null-prototype
 * object. A reserved key is a `ProtocolError` naming the field. Nested values
 * are not copied: use it on values that came through `sanitizeJson`, or read
 * nested fields with `ownRecord` in turn.
 */
export function ownRecord(value: unknown, path: string): JsonRecord {
  if (!isObject(value)) throw new ProtocolError(path, 'expected an object');
  const out: JsonRecord = Object.create(null);
  for (const key of Object.keys(value)) {
    if (isReservedKey(key)) throw new ProtocolError(fieldPath(path, key), 'reserved key (__proto__, constructor and prototype are not allowed)');
    out[key] = value[key];
  }
  return out;
}

export interface SanitizeOptions {
  /** Requests: a reserved key is an error. Storage and runner lines keep it as an ordinary key of a null-prototype object. */
  rejectReserved: boolean;
  /** Deepest allowed nesting (the top value is depth 1). */
  maxDepth: number;
}

const REQUEST: SanitizeOptions = { rejectReserved: true, maxDepth: MAX_JSON_DEPTH };
const TRUSTED_SHAPE: SanitizeOptions = { rejectReserved: false, maxDepth: Number.POSITIVE_INFINITY };

/**
 * A deep copy of a JSON-like value: arrays stay arrays, every object becomes
 * a null-prototype object of its own enumerable properties. Iterative, so
 * depth costs heap, never the stack. Throws `ProtocolError` naming the field.
 */
export function sanitizeJson(value: unknown, path = 'body', options: SanitizeOptions = REQUEST): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const root: { value: unknown } = { value: undefined };
  // Each entry: a source container, the copy to fill, its path and depth.
  const stack: Array<{ from: unknown; into: JsonRecord | unknown[]; path: string; depth: number }> = [];
  const copyOf = (from: object, at: string, depth: number): JsonRecord | unknown[] => {
    if (depth > options.maxDepth) throw new JsonDepthError(at, `nested deeper than ${options.maxDepth} levels`);
    const into: JsonRecord | unknown[] = Array.isArray(from) ? [] : Object.create(null);
    stack.push({ from, into, path: at, depth });
    return into;
  };
  root.value = copyOf(value, path, 1);
  while (stack.length > 0) {
    const { from, into, path: at, depth } = stack.pop()!;
    if (Array.isArray(from)) {
      const list = into as unknown[];
      for (let i = 0; i < from.length; i++) {
        const item: unknown = from[i];
        list.push(typeof item === 'object' && item !== null ? copyOf(item, fieldPath(at, i), depth + 1) : item);
      }
      continue;
    }
    const record = into as JsonRecord;
    const source = from as JsonRecord;
    for (const key of Object.keys(source)) {
      if (options.rejectReserved && isReservedKey(key)) {
        throw new ProtocolError(fieldPath(at, key), 'reserved key (__proto__, constructor and prototype are not allowed)');
      }
      const item = source[key];
      record[key] = typeof item === 'object' && item !== null ? copyOf(item, fieldPath(at, key), depth + 1) : item;
    }
  }
  return root.value;
}

/** `JSON.parse` for a request body: null-prototype objects, no reserved key, at most `MAX_JSON_DEPTH` deep. */
export function parseRequestJson(text: string, path = 'body'): unknown {
  return sanitizeJson(JSON.parse(text), path, REQUEST);
}

/**
 * `JSON.parse` for what the relay wrote or its runner sent (storage, runner
 * lines): null-prototype objects, reserved keys kept as plain data (a model's
 * tool input may legitimately use them), no depth bound.
 */
export function parseTrustedJson(text: string, path = 'value'): unknown {
  return sanitizeJson(JSON.parse(text), path, TRUSTED_SHAPE);
}

/** The same copy for values that arrive already parsed (RPC, structured clone). */
export function sanitizeTrusted(value: unknown, path = 'value'): unknown {
  return sanitizeJson(value, path, TRUSTED_SHAPE);
}

/**
 * A plain-object copy for a Durable Object RPC: workerd's structured clone
 * refuses null-prototype objects ("Could not serialize object of type
 * Object"). Only for values that were parsed above, so every key is data.
 */
export function toRpcValue<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}
