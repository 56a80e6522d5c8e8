import { describe, expect, it } from 'vitest';
import {
  ProtocolError,
  RESERVED_KEYS,
  parseAttachTokenPayload,
  parseClientFrame,
  parseCreateRunBody,
  parseHarnessOptions,
  parseMessages,
  parseRequestJson,
  parseRunError,
  parseRunnerHealth,
  parseRunnerRunRequest,
  parseRunView,
  parseTailFrame,
  sanitizeJson,
} from '../../src/protocol/index.ts';
import { prng } from '../support/prng.ts';

/**
 * Every parser at an edge, attacked with random objects: fields moved into
 * the prototype are never read, a reserved own key never reaches a
 * prototype (request parsers refuse it, naming the field), and nothing but a
 * `ProtocolError` ever comes out. Seeded: a failure prints its seed.
 */

type Parser = (value: unknown) => unknown;

interface Case {
  name: string;
  parse: Parser;
  samples: unknown[];
  /** Request parsers: a reserved key anywhere is a `ProtocolError` naming it. */
  refusesReserved: boolean;
}

const RUN = `run_${'0'.repeat(32)}`;
const POLICY = { defaultHarness: 'demo', allowUnsafe: false } as const;

const CASES: Case[] = [
  {
    name: 'parseCreateRunBody',
    parse: (v) => parseCreateRunBody(v, POLICY),
    samples: [
      { prompt: 'hi', harness: 'claude-code', threadId: 't1', model: 'sonnet', harnessOptions: { maxTurns: 3, permissionMode: 'plan' } },
      { messages: [{ role: 'user', content: [{ type: 'text', content: 'x' }], metadata: { a: { b: 1 } } }], harnessOptions: { chunks: 2, delayMs: 0 } },
    ],
    refusesReserved: true,
  },
  { name: 'parseMessages', parse: (v) => parseMessages(v), samples: [[{ role: 'user', content: 'x' }, { role: 'assistant', content: null, toolCalls: [{ id: 'c', function: { name: 'f' } }] }]], refusesReserved: true },
  { name: 'parseHarnessOptions(chat)', parse: (v) => parseHarnessOptions('chat', v, POLICY), samples: [{ provider: 'openai', systemPrompt: 'brief' }], refusesReserved: true },
  { name: 'parseHarnessOptions(codex)', parse: (v) => parseHarnessOptions('codex', v, POLICY), samples: [{ sandboxMode: 'read-only', modelReasoningEffort: 'low', sessionId: 's-1' }], refusesReserved: true },
  { name: 'parseRequestJson', parse: (v) => parseRequestJson(JSON.stringify(v)), samples: [{ a: [{ b: { c: 1 } }], d: 'x' }], refusesReserved: false },
  {
    name: 'parseRunnerRunRequest',
    parse: parseRunnerRunRequest,
    samples: [{ runId: 'run_1', threadId: 't', tenant: null, messages: [{ role: 'user', content: 'x' }], harness: 'claude-code', harnessOptions: { maxTurns: 2 } }],
    refusesReserved: false,
  },
  {
    name: 'parseRunView',
    parse: parseRunView,
    samples: [{ runId: RUN, threadId: 't', status: 'failed', lastSeq: 3, startedAt: 1, updatedAt: 2, finishedAt: 2, error: { message: 'x', code: 'c' } }],
    refusesReserved: false,
  },
  { name: 'parseRunError', parse: parseRunError, samples: [{ message: 'boom', code: 'stalled' }], refusesReserved: false },
  {
    name: 'parseTailFrame',
    parse: parseTailFrame,
    samples: [{ seq: 1, id: '1', chunk: { type: 'TEXT_MESSAGE_CONTENT', delta: 'x' } }, { type: 'status', record: { runId: RUN, threadId: 't', status: 'completed', lastSeq: 1, startedAt: 1, updatedAt: 1 } }],
    refusesReserved: false,
  },
  { name: 'parseClientFrame', parse: parseClientFrame, samples: [{ type: 'abort', runId: RUN }], refusesReserved: false },
  { name: 'parseAttachTokenPayload', parse: parseAttachTokenPayload, samples: [{ v: 1, run: RUN, tenant: 'acme', exp: 100 }], refusesReserved: false },
  { name: 'parseRunnerHealth', parse: parseRunnerHealth, samples: [{ ok: true, harnesses: ['demo'], chatProviders: ['openai'], unavailable: { codex: 'no codex CLI' } }], refusesReserved: false },
];

type Outcome = { ok: true; json: string } | { ok: false; field: string };

function outcome(parse: Parser, value: unknown): Outcome {
  try {
    return { ok: true, json: JSON.stringify(parse(value)) ?? 'undefined' };
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return { ok: false, field: error.field };
  }
}

function clone(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

/** Paths (as key lists) of every object, not array, in a JSON value; `[]` is the value itself. */
function objectPaths(value: unknown, path: Array<string | number> = []): Array<Array<string | number>> {
  if (typeof value !== 'object' || value === null) return [];
  const here = Array.isArray(value) ? [] : [path];
  const children = Object.entries(value).flatMap(([key, item]) => objectPaths(item, [...path, Array.isArray(value) ? Number(key) : key]));
  return [...here, ...children];
}

function at(root: unknown, path: Array<string | number>): Record<string, unknown> {
  return path.reduce<unknown>((node, key) => (node as Record<string, unknown>)[key], root) as Record<string, unknown>;
}

function replaceAt(root: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const parent = at(root, path.slice(0, -1));
  parent[path.at(-1)!] = replacement;
  return root;
}

const pick = <T,>(rng: () => number, list: readonly T[]): T => list[Math.floor(rng() * list.length)]!;

/** A random JSON-ish value whose keys are drawn from the parser's own fields and the reserved ones. */
function randomValue(rng: () => number, keys: string[], depth = 0): unknown {
  const roll = rng();
  if (depth > 3 || roll < 0.3) return pick(rng, [null, true, 0, -1, 1.5, 3, '', 'x', 'run_1', 'demo', 'abort', 'status', 'user']);
  if (roll < 0.45) return Array.from({ length: Math.floor(rng() * 3) }, () => randomValue(rng, keys, depth + 1));
  const object: Record<string, unknown> = {};
  for (let i = Math.floor(rng() * 4); i > 0; i--) {
    Object.defineProperty(object, pick(rng, keys), { value: randomValue(rng, keys, depth + 1), enumerable: true, writable: true, configurable: true });
  }
  return object;
}

function keysOf(samples: unknown[]): string[] {
  const keys = new Set<string>(RESERVED_KEYS);
  const walk = (value: unknown) => {
    if (typeof value !== 'object' || value === null) return;
    for (const [key, item] of Object.entries(value)) {
      if (!Array.isArray(value)) keys.add(key);
      walk(item);
    }
  };
  samples.forEach(walk);
  return [...keys];
}

function expectPrototypeUntouched(): void {
  expect(Object.getOwnPropertyNames(Object.prototype).sort()).toEqual(PRISTINE);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

const PRISTINE = Object.getOwnPropertyNames(Object.prototype).sort();
const SEEDS = Array.from({ length: 40 }, (_, i) => 0x5eed + i);

describe.each(CASES)('$name, attacked', ({ parse, samples, refusesReserved }) => {
  it('reads no field from a prototype: moving fields there equals removing them', () => {
    for (const seed of SEEDS) {
      const rng = prng(seed);
      const sample = clone(pick(rng, samples));
      const path = pick(rng, objectPaths(sample));
      const node = at(sample, path);
      const moved = Object.keys(node).filter(() => rng() < 0.5);
      const proto: Record<string, unknown> = {};
      const own: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(node)) (moved.includes(key) ? proto : own)[key] = value;
      const inherited = replaceAt(clone(sample), path, Object.assign(Object.create(proto), own));
      const removed = replaceAt(clone(sample), path, { ...own });
      expect(outcome(parse, inherited), `seed ${seed}, path ${path.join('.')}, moved ${moved.join(',')}`).toEqual(outcome(parse, removed));
      expectPrototypeUntouched();
    }
  });

  it(refusesReserved ? 'refuses a reserved own key anywhere, naming the field' : 'never lets a reserved own key reach a prototype', () => {
    for (const seed of SEEDS) {
      const rng = prng(seed);
      const sample = clone(pick(rng, samples));
      const path = pick(rng, objectPaths(sample));
      const key = pick(rng, RESERVED_KEYS);
      Object.defineProperty(at(sample, path), key, { value: { polluted: 'yes', harness: 'codex' }, enumerable: true, writable: true, configurable: true });
      const result = outcome(parse, sample);
      if (refusesReserved) {
        expect(result.ok, `seed ${seed}: ${key} at ${path.join('.')}`).toBe(false);
        if (!result.ok) expect(result.field.endsWith(key)).toBe(true);
      }
      expectPrototypeUntouched();
    }
  });

  it('answers random values with a result or a ProtocolError, nothing else', () => {
    const keys = keysOf(samples);
    for (const seed of SEEDS) {
      const rng = prng(seed);
      for (let i = 0; i < 25; i++) {
        expect(() => outcome(parse, randomValue(rng, keys))).not.toThrow();
        expectPrototypeUntouched();
      }
    }
  });
});

describe('sanitizeJson', () => {
  it('copies into null-prototype objects at every depth', () => {
    const copy = sanitizeJson(JSON.parse('{"a":[{"b":{"c":1}}]}')) as { a: Array<{ b: object }> };
    expect(Object.getPrototypeOf(copy)).toBeNull();
    expect(Object.getPrototypeOf(copy.a[0]!)).toBeNull();
    expect(Object.getPrototypeOf(copy.a[0]!.b)).toBeNull();
    expect(Array.isArray(copy.a)).toBe(true);
  });

  it('refuses 65 levels, and 10,000, without touching the stack', () => {
    const deep = (n: number) => JSON.parse(`${'['.repeat(n)}${']'.repeat(n)}`);
    expect(() => sanitizeJson(deep(64))).not.toThrow();
    for (const n of [65, 10_000]) expect(() => sanitizeJson(deep(n))).toThrow(ProtocolError);
  });
});
