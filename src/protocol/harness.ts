import { ProtocolError } from './errors.ts';
import { isObject } from './json.ts';

/** The harnesses a runner can host. The type is derived from the list so the two cannot drift. */
export const HARNESS_NAMES = ['demo', 'claude-code', 'codex', 'chat'] as const;
export type HarnessName = (typeof HARNESS_NAMES)[number];

export function isHarnessName(value: unknown): value is HarnessName {
  return typeof value === 'string' && (HARNESS_NAMES as readonly string[]).includes(value);
}

/**
 * Options of the deterministic `demo` harness. Fault injection points count
 * text deltas (0-based): at delta `k` the harness fails, crashes or stalls.
 */
export interface DemoOptions {
  /** Total text deltas. */
  chunks: number;
  /** Pause between chunks, ms. 0 streams as fast as the pipe takes it. */
  delayMs: number;
  /** Size of each text delta, bytes. */
  chunkBytes: number;
  /** Emit `RUN_ERROR` at delta k and end the stream. */
  failAt?: number;
  /** Die at delta k: the stream is cut with no terminal chunk. */
  crashAt?: number;
  /** Stop writing at delta k and keep the connection open. */
  stallAt?: number;
}

export const DEMO_DEFAULTS: DemoOptions = { chunks: 40, delayMs: 40, chunkBytes: 6 };

/** Bounds that keep a request from asking a runner for an unbounded amount of work. */
const DEMO_LIMITS = {
  chunks: [0, 1_000_000],
  delayMs: [0, 60_000],
  chunkBytes: [1, 1_048_576],
  failAt: [0, 1_000_000],
  crashAt: [0, 1_000_000],
  stallAt: [0, 1_000_000],
} as const satisfies Record<keyof DemoOptions, readonly [number, number]>;

export function parseDemoOptions(value: unknown, path = 'harnessOptions'): DemoOptions {
  if (value === undefined) return { ...DEMO_DEFAULTS };
  if (!isObject(value)) throw new ProtocolError(path, 'expected an object');
  const options: DemoOptions = { ...DEMO_DEFAULTS };
  for (const [key, raw] of Object.entries(value)) {
    if (!Object.hasOwn(DEMO_LIMITS, key)) {
      throw new ProtocolError(`${path}.${key}`, `unknown option for the demo harness (known: ${Object.keys(DEMO_LIMITS).join(', ')})`);
    }
    const [min, max] = DEMO_LIMITS[key as keyof DemoOptions];
    if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < min || raw > max) {
      throw new ProtocolError(`${path}.${key}`, `expected an integer from ${min} to ${max}`);
    }
    options[key as keyof DemoOptions] = raw;
  }
  return options;
}

/** Options for the other harnesses: a flat JSON object, passed through to the adapter. */
export function parseHarnessOptions(harness: HarnessName, value: unknown, path = 'harnessOptions'): Record<string, unknown> | undefined {
  if (harness === 'demo') return value === undefined ? undefined : { ...parseDemoOptions(value, path) };
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new ProtocolError(path, 'expected an object');
  return value;
}
