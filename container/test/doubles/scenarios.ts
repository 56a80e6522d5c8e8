/**
 * The scenarios every double plays (the CLI doubles and the provider double),
 * picked by a tag in the prompt so a test drives them through the real
 * adapter without any side channel: `[scenario:long 20000]`.
 */
export type Scenario =
  | { kind: 'tool' }
  | { kind: 'long'; chars: number }
  | { kind: 'api-error' }
  | { kind: 'invalid-key' }
  | { kind: 'rate-limit' }
  | { kind: 'overloaded' }
  /** Codex only: a transient "Reconnecting... 1/5" notice, then the normal run. */
  | { kind: 'reconnect' }
  /**
   * The CLI doubles: the model calls the run's host tools through the adapter's MCP bridge, in order;
   * with `cli-tool` calls among them, the CLI's own tool of that name (the Claude Code double: `Bash`).
   */
  | { kind: 'host-tool'; calls: HostToolScenarioCall[] };

export interface HostToolScenarioCall {
  name: string;
  input: Record<string, unknown>;
  /** `[scenario:cli-tool …]`: one of the CLI's own tools, not a bridged one. */
  cli?: true;
}

/**
 * `[scenario:host-tool <name> <JSON object>]` or `[scenario:cli-tool <name> <JSON object>]`, once
 * per call (the object may not hold `}]`). The provider double calls either by its name, if offered.
 */
const HOST_TOOL_TAG = /\[scenario:(host-tool|cli-tool) ([A-Za-z][A-Za-z0-9_-]*) (\{.*?\})\]/g;

export const TOOL_COMMAND = 'ls';
export const TOOL_OUTPUT = 'README.md\npackage.json\n';
/** A long answer streams in deltas of this many characters. */
export const DELTA_CHARS = 20;

export function scenarioOf(prompt: string): Scenario {
  const calls = [...prompt.matchAll(HOST_TOOL_TAG)].map(([, tag, name, json]): HostToolScenarioCall => ({ name: name!, input: JSON.parse(json!) as Record<string, unknown>, ...(tag === 'cli-tool' ? { cli: true as const } : {}) }));
  if (calls.length > 0) return { kind: 'host-tool', calls };
  const match = /\[scenario:([a-z-]+)(?: (\d+))?\]/.exec(prompt);
  switch (match?.[1]) {
    case 'long':
      return { kind: 'long', chars: Number(match[2] ?? 20_000) };
    case 'api-error':
    case 'invalid-key':
    case 'rate-limit':
    case 'overloaded':
    case 'reconnect':
      return { kind: match[1] };
    default:
      return { kind: 'tool' };
  }
}

/** The answer text: deterministic, so a test knows exactly what must arrive. */
export function answerText(prompt: string, chars?: number): string {
  const base = `Done: ${prompt.replace(/\[scenario:[^\]]*\]/g, '').trim() || 'ok'}. `;
  if (chars === undefined) return base.trim();
  let text = '';
  while (text.length < chars) text += base;
  return text.slice(0, chars);
}

export function readStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (data: string) => (text += data));
    process.stdin.on('end', () => resolve(text));
    process.stdin.on('error', reject);
  });
}
