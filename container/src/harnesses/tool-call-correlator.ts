import { randomUUID } from 'node:crypto';

/**
 * How long a bridged tool call waits for the CLI's stream to show it. The CLI
 * writes the model's `tool_use` (Claude Code's `assistant` line, Codex's
 * `item.started`) before it calls the tool, so the wait is normally the few
 * milliseconds between its stdout line and its MCP request reaching us; the
 * bound only matters when a stream line never comes.
 */
export const STREAM_CALL_WAIT_MS = 5_000;

export interface StreamToolCall {
  toolCallId: string;
  name: string;
  input: unknown;
}

interface Waiter {
  key: string;
  resolve(toolCallId: string): void;
}

/** JSON with object keys sorted: the same input whatever order the CLI and the model wrote its keys in. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const key of Object.keys(item).sort()) sorted[key] = (item as Record<string, unknown>)[key];
    return sorted;
  });
}

const keyOf = (name: string, input: unknown) => `${name}\u0000${canonicalJson(input ?? {})}`;

/**
 * Gives a bridged tool call the id the model gave it. The CLI's MCP
 * `tools/call` reaches the bridge with the tool's name and input only, while
 * the stream carries the model's id (`toolu_…`, Codex's item id) on
 * `TOOL_CALL_START/END`; the request chunk, the result and the call must share
 * that one id, which also becomes the webhook's Idempotency-Key. So a bridge
 * call takes the oldest unclaimed stream call of the same name and input
 * (first come, first served: two identical calls are interchangeable), and
 * waits for one when its MCP request arrived first.
 *
 * Invariant: each stream call is claimed at most once, and each claim returns
 * once, with a stream id or, when none appeared in time, a fresh one.
 */
export class ToolCallCorrelator {
  readonly #waitMs: number;
  readonly #unclaimed: { key: string; toolCallId: string }[] = [];
  readonly #waiting: Waiter[] = [];

  constructor(waitMs = STREAM_CALL_WAIT_MS) {
    this.#waitMs = waitMs;
  }

  /** A tool call the stream has shown (and the harness has written). */
  offer({ toolCallId, name, input }: StreamToolCall): void {
    const key = keyOf(name, input);
    const at = this.#waiting.findIndex((waiter) => waiter.key === key);
    if (at === -1) {
      this.#unclaimed.push({ key, toolCallId });
      return;
    }
    const [waiter] = this.#waiting.splice(at, 1);
    waiter!.resolve(toolCallId);
  }

  /** The id for a bridge call of `name` with `input`. */
  claim(name: string, input: unknown, signal?: AbortSignal): Promise<string> {
    const key = keyOf(name, input);
    const at = this.#unclaimed.findIndex((call) => call.key === key);
    if (at !== -1) return Promise.resolve(this.#unclaimed.splice(at, 1)[0]!.toolCallId);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        key,
        resolve: (toolCallId) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(toolCallId);
        },
      };
      const leave = () => {
        const index = this.#waiting.indexOf(waiter);
        if (index !== -1) this.#waiting.splice(index, 1);
      };
      const onAbort = () => {
        leave();
        clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      };
      // No stream line for this call: an id of its own, so the request, the result and the webhook still agree.
      const timer = setTimeout(() => {
        leave();
        signal?.removeEventListener('abort', onAbort);
        resolve(`host_${randomUUID()}`);
      }, this.#waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }
}
