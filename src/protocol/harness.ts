import { ProtocolError } from './errors.ts';
import { isReservedKey, ownRecord, type JsonRecord } from './json.ts';

/** The harnesses a runner can host. The type is derived from the list so the two cannot drift. */
export const HARNESS_NAMES = ['demo', 'claude-code', 'codex', 'chat'] as const;
export type HarnessName = (typeof HARNESS_NAMES)[number];

export function isHarnessName(value: unknown): value is HarnessName {
  return typeof value === 'string' && (HARNESS_NAMES as readonly string[]).includes(value);
}

export const CHAT_PROVIDERS = ['anthropic', 'openai'] as const;
export type ChatProvider = (typeof CHAT_PROVIDERS)[number];

/** A bad or unknown option: `400 invalid_harness_options`, naming the field. */
export class HarnessOptionsError extends ProtocolError {}

/** A dangerous mode the operator has not allowed: `400 option_not_allowed`. */
export class OptionNotAllowedError extends ProtocolError {}

/**
 * One rule per option. The CLI adapters build a `sh -c` command line
 * (TOOLCHAIN.md: `maxTurns` goes in unquoted, codex `--config` values are
 * pasted into TOML), so nothing free-form reaches them: integers are
 * integers, enums are enums, ids match a strict pattern. `unsafe` values
 * remove the harness's own guard rails and need the operator's consent.
 */
type OptionRule =
  | { readonly kind: 'int'; readonly min: number; readonly max: number }
  | { readonly kind: 'enum'; readonly values: readonly string[]; readonly unsafe?: readonly string[] }
  | { readonly kind: 'id' }
  /** Free text that goes to a model API, never to a command line. */
  | { readonly kind: 'text'; readonly maxLength: number }
  /** The demo's scripted host tool calls: `[{name, input}]`, each name one of the run's `tools` (checked at `POST /runs`). */
  | { readonly kind: 'toolCalls'; readonly max: number };

const int = (min: number, max: number) => ({ kind: 'int', min, max }) as const;
/** Session ids are UUIDs in both CLIs; this also keeps quotes and spaces out. */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * The one schema of every harness's `harnessOptions`, applied by the Worker
 * before anything is stored and again by the runner before a harness starts.
 * The demo's bounds keep a request from asking a runner for unbounded work.
 */
export const HARNESS_OPTION_RULES = {
  demo: {
    chunks: int(0, 1_000_000),
    delayMs: int(0, 60_000),
    chunkBytes: int(1, 1_048_576),
    failAt: int(0, 1_000_000),
    crashAt: int(0, 1_000_000),
    stallAt: int(0, 1_000_000),
    toolCalls: { kind: 'toolCalls', max: 32 },
  },
  'claude-code': {
    sessionId: { kind: 'id' },
    maxTurns: int(1, 1_000),
    permissionMode: { kind: 'enum', values: ['default', 'acceptEdits', 'bypassPermissions', 'plan'], unsafe: ['bypassPermissions'] },
  },
  codex: {
    sessionId: { kind: 'id' },
    sandboxMode: { kind: 'enum', values: ['read-only', 'workspace-write', 'danger-full-access'], unsafe: ['danger-full-access'] },
    modelReasoningEffort: { kind: 'enum', values: ['minimal', 'low', 'medium', 'high'] },
  },
  chat: {
    provider: { kind: 'enum', values: CHAT_PROVIDERS },
    systemPrompt: { kind: 'text', maxLength: 32_768 },
  },
} as const satisfies Record<HarnessName, Record<string, OptionRule>>;

/** One scripted call of the demo harness. */
export interface DemoToolCall {
  name: string;
  input: Record<string, unknown>;
}

/** JSON text of one scripted call's input. */
const MAX_DEMO_TOOL_INPUT_CHARS = 16_384;

type ValueOf<R> = R extends { kind: 'int' } ? number : R extends { kind: 'toolCalls' } ? DemoToolCall[] : R extends { kind: 'enum'; values: readonly (infer V)[] } ? V : string;
/** The parsed options of one harness, derived from its rules so type and check cannot drift. */
export type HarnessOptionsOf<H extends HarnessName> = { -readonly [K in keyof (typeof HARNESS_OPTION_RULES)[H]]?: ValueOf<(typeof HARNESS_OPTION_RULES)[H][K]> };

export type ClaudeCodeOptions = HarnessOptionsOf<'claude-code'>;
export type CodexOptions = HarnessOptionsOf<'codex'>;
export type ChatOptions = HarnessOptionsOf<'chat'>;

/**
 * What a run gets when neither the caller nor the operator
 * (`DEFAULT_HARNESS_OPTIONS`) chose: never an adapter's own default, since the
 * claude-code adapter's is `bypassPermissions`.
 */
export const SAFE_HARNESS_DEFAULTS = {
  'claude-code': { permissionMode: 'acceptEdits' },
  codex: { sandboxMode: 'workspace-write' },
} as const satisfies { [H in HarnessName]?: HarnessOptionsOf<H> };

export interface ParseOptionsPolicy {
  /** `ALLOW_UNSAFE_HARNESS_OPTIONS`: unsafe values may be asked for. The runner trusts its run object's choice. */
  allowUnsafe: boolean;
}

function checkValue(rule: OptionRule, raw: unknown, at: string, policy: ParseOptionsPolicy): unknown {
  switch (rule.kind) {
    case 'int':
      if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < rule.min || raw > rule.max) {
        throw new HarnessOptionsError(at, `expected an integer from ${rule.min} to ${rule.max}`);
      }
      return raw;
    case 'enum':
      if (typeof raw !== 'string' || !rule.values.includes(raw)) throw new HarnessOptionsError(at, `expected one of ${rule.values.join(', ')}`);
      if (!policy.allowUnsafe && rule.unsafe?.includes(raw)) {
        throw new OptionNotAllowedError(at, `${raw} turns off the harness's own safeguards; the operator allows it only with ALLOW_UNSAFE_HARNESS_OPTIONS=true`);
      }
      return raw;
    case 'id':
      if (typeof raw !== 'string' || !SESSION_ID.test(raw)) throw new HarnessOptionsError(at, `expected an id matching ${SESSION_ID}`);
      return raw;
    case 'text':
      if (typeof raw !== 'string' || raw === '' || raw.length > rule.maxLength) {
        throw new HarnessOptionsError(at, `expected a non-empty string of at most ${rule.maxLength} characters`);
      }
      return raw;
    case 'toolCalls':
      if (!Array.isArray(raw) || raw.length > rule.max) throw new HarnessOptionsError(at, `expected an array of at most ${rule.max} {name, input} calls`);
      return raw.map((item: unknown, i): DemoToolCall => {
        let call: JsonRecord;
        let input: JsonRecord;
        try {
          call = ownRecord(item, `${at}[${i}]`);
          input = ownRecord(call.input ?? {}, `${at}[${i}].input`);
        } catch (error) {
          throw error instanceof ProtocolError ? new HarnessOptionsError(error.field, error.message.slice(error.field.length + 2)) : error;
        }
        for (const key of Object.keys(call)) if (key !== 'name' && key !== 'input') throw new HarnessOptionsError(`${at}[${i}].${key}`, 'unknown field (known: name, input)');
        if (typeof call.name !== 'string' || call.name === '') throw new HarnessOptionsError(`${at}[${i}].name`, "expected the name of one of the run's tools");
        if (JSON.stringify(input).length > MAX_DEMO_TOOL_INPUT_CHARS) throw new HarnessOptionsError(`${at}[${i}].input`, `expected at most ${MAX_DEMO_TOOL_INPUT_CHARS} characters of JSON`);
        return { name: call.name, input };
      });
  }
}

/**
 * Parse, don't cast: `harnessOptions` of `harness`, own properties only, into
 * a null-prototype object. Unknown keys are errors, so a typo is a 400 naming
 * the field instead of a run that fails later.
 */
export function parseHarnessOptions<H extends HarnessName>(harness: H, value: unknown, policy: ParseOptionsPolicy, path = 'harnessOptions'): HarnessOptionsOf<H> | undefined {
  if (value === undefined) return undefined;
  let fields: JsonRecord;
  try {
    fields = ownRecord(value, path);
  } catch (error) {
    throw error instanceof ProtocolError ? new HarnessOptionsError(error.field, error.message.slice(error.field.length + 2)) : error;
  }
  const rules: Record<string, OptionRule> = HARNESS_OPTION_RULES[harness];
  const out: JsonRecord = Object.create(null);
  for (const key of Object.keys(fields)) {
    const at = `${path}.${key}`;
    if (isReservedKey(key) || !Object.hasOwn(rules, key)) {
      throw new HarnessOptionsError(at, `unknown option for the ${harness} harness (known: ${Object.keys(rules).join(', ')})`);
    }
    out[key] = checkValue(rules[key]!, fields[key], at, policy);
  }
  return out as HarnessOptionsOf<H>;
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
  /** Host tools to call, in order, after the text (SPEC "Workspace and host tools"). */
  toolCalls?: DemoToolCall[];
}

export const DEMO_DEFAULTS: DemoOptions = { chunks: 40, delayMs: 40, chunkBytes: 6 };

/** The demo's options with its defaults filled in (the demo has no unsafe option). */
export function parseDemoOptions(value: unknown, path = 'harnessOptions'): DemoOptions {
  return { ...DEMO_DEFAULTS, ...parseHarnessOptions('demo', value, { allowUnsafe: false }, path) };
}

/**
 * Chunks of a demo run besides its text deltas: RUN_STARTED, the reasoning
 * message (7), the text message's start and end, the tool call (5), the
 * closing message (3) and RUN_FINISHED. `container/src/harnesses/demo-script.ts`
 * writes exactly these; its test holds the two together.
 */
export const DEMO_OVERHEAD_EVENTS = 19;
/**
 * Chunks of each scripted host tool call (`toolCalls`), after the fixed ones:
 * its TOOL_CALL_START, ARGS and END, the `tool-input-available` request, its
 * TOOL_CALL_RESULT.
 */
export const DEMO_HOST_TOOL_CALL_EVENTS = 5;
/** An upper bound of a text delta chunk's JSON besides its delta (type, messageId). */
const DEMO_CHUNK_JSON_OVERHEAD_BYTES = 128;
/** An upper bound of a host tool call's five chunks besides its input (ids, names, the result's envelope). */
const DEMO_TOOL_CALL_JSON_OVERHEAD_BYTES = 1_024;
/** The input is written three times (the args delta, escaped; TOOL_CALL_END; the request); escaping rarely doubles it. */
const DEMO_TOOL_CALL_INPUT_COPIES = 4;

/** Every chunk a demo run with these options writes when no fault strikes. */
export function demoEventCount(options: DemoOptions): number {
  return options.chunks + DEMO_OVERHEAD_EVENTS + (options.toolCalls?.length ?? 0) * DEMO_HOST_TOOL_CALL_EVENTS;
}

export interface RunBudget {
  maxEvents: number;
  maxBytes: number;
  runMaxMs: number;
}

/**
 * The demo is the load generator, so what it is asked for is bounded by the
 * same limits as any run: a request it could not finish within them is a
 * `400` up front, not a run that fails an hour later.
 */
export function requireDemoWithinBudget(options: DemoOptions, budget: RunBudget, path = 'harnessOptions'): void {
  const events = demoEventCount(options);
  const calls = options.toolCalls ?? [];
  if (events > budget.maxEvents) {
    const what = calls.length > 0 ? `${options.chunks} deltas and ${calls.length} tool calls` : `${options.chunks} deltas`;
    throw new HarnessOptionsError(`${path}.chunks`, `${what} make a run of ${events} events, over RUN_MAX_EVENTS (${budget.maxEvents})`);
  }
  // A tool's output is the webhook's to size; RUN_MAX_BYTES still bounds it as the run goes.
  const callBytes = calls.reduce((sum, call) => sum + DEMO_TOOL_CALL_JSON_OVERHEAD_BYTES + DEMO_TOOL_CALL_INPUT_COPIES * JSON.stringify(call.input).length, 0);
  if (callBytes > budget.maxBytes) {
    throw new HarnessOptionsError(`${path}.toolCalls`, `${calls.length} tool calls with these inputs are about ${callBytes} bytes, over RUN_MAX_BYTES (${budget.maxBytes})`);
  }
  const bytes = options.chunks * (options.chunkBytes + DEMO_CHUNK_JSON_OVERHEAD_BYTES) + callBytes;
  if (bytes > budget.maxBytes) {
    throw new HarnessOptionsError(`${path}.chunkBytes`, `${options.chunks} deltas of ${options.chunkBytes} bytes${calls.length > 0 ? ` and ${calls.length} tool calls` : ''} are about ${bytes} bytes, over RUN_MAX_BYTES (${budget.maxBytes})`);
  }
  // The demo waits delayMs after every chunk it writes, not only after text deltas.
  const ms = events * options.delayMs;
  if (ms > budget.runMaxMs) {
    throw new HarnessOptionsError(`${path}.delayMs`, `${events} chunks ${options.delayMs} ms apart take ${Math.ceil(ms / 1000)} s, over RUN_MAX_SECONDS (${budget.runMaxMs / 1000})`);
  }
}

const OPENAI_MODEL = /^(?:gpt-|o\d|chatgpt-)/;

/**
 * Which API the `chat` harness calls: the explicit option, else the one the
 * model id belongs to, else whichever provider is usable (Anthropic first).
 */
export function resolveChatProvider(model: string | undefined, options: ChatOptions, usable: (provider: ChatProvider) => boolean): ChatProvider {
  if (options.provider !== undefined) return options.provider;
  if (model !== undefined) return OPENAI_MODEL.test(model) ? 'openai' : 'anthropic';
  if (!usable('anthropic') && usable('openai')) return 'openai';
  return 'anthropic';
}

/** The secret each chat provider needs. */
export const CHAT_PROVIDER_KEYS: Record<ChatProvider, string> = { anthropic: 'ANTHROPIC_API_KEY', openai: 'OPENAI_API_KEY' };
