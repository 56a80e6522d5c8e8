import { randomUUID } from 'node:crypto';
import type { ToolBridgeProvisioner } from '@tanstack/ai-sandbox';
import { APPROVAL_TOOL_NAME, MAX_TOOL_ERROR_CHARS, TOOL_CALL_ID_PATTERN, isObject, type ToolOutcome } from '../../../src/protocol/index.ts';
import type { ChunkWriter, WireChunk } from '../chunk-writer.ts';
import type { HostTools } from '../host-tools.ts';
import { STREAM_CALL_WAIT_MS } from './tool-call-correlator.ts';
import { toWireShape } from './wire-shape.ts';

/**
 * What Claude Code sends its `--permission-prompt-tool` before it runs one of
 * its own tools that no rule or mode allows (2.1.332, recorded inside
 * `unshare -n`): `{tool_name, input, tool_use_id}`, the last being the
 * model's id of the call waiting for the answer.
 */
export interface PermissionRequest {
  toolName: string;
  input: unknown;
  toolUseId: string | undefined;
}

/** The prompt tool's answer, as the CLI reads it (`@tanstack/ai-sandbox`'s `PermissionToolResult`). */
export interface PermissionDecision {
  behavior: 'allow' | 'deny';
  message?: string;
}

export function parsePermissionRequest(args: unknown): PermissionRequest {
  const request = isObject(args) ? args : {};
  const toolName = typeof request.tool_name === 'string' && request.tool_name !== '' ? request.tool_name : 'tool';
  const toolUseId = typeof request.tool_use_id === 'string' ? request.tool_use_id : undefined;
  return { toolName, input: request.input ?? {}, toolUseId };
}

const clip = (text: string) => (text.length > MAX_TOOL_ERROR_CHARS ? `${text.slice(0, MAX_TOOL_ERROR_CHARS)}…` : text);

/**
 * A person's answer as the CLI's decision, and whether it was one: anything
 * but `{behavior: 'allow' | 'deny', message?: string}` (an error outcome such
 * as the client tool timeout, a typo, an extra field) denies, saying why,
 * because only an answer that plainly says allow may run the tool.
 */
export function decisionOf(outcome: ToolOutcome, toolName: string): { decision: PermissionDecision; answered: boolean } {
  const refuse = (why: string) => ({ decision: { behavior: 'deny' as const, message: clip(`${toolName} was not run: ${why}`) }, answered: false });
  if ('error' in outcome) return refuse(`the approval was not given (${outcome.error}).`);
  const answer = outcome.output;
  const expected = "the answer was not {behavior: 'allow' | 'deny', message?: string}";
  if (!isObject(answer)) return refuse(`${expected}.`);
  const extra = Object.keys(answer).filter((key) => key !== 'behavior' && key !== 'message');
  if (extra.length > 0) return refuse(`${expected} (unknown field ${extra.join(', ')}).`);
  if (answer.message !== undefined && typeof answer.message !== 'string') return refuse(`${expected} (message is not a string).`);
  if (answer.behavior === 'allow') return { decision: { behavior: 'allow' }, answered: true };
  if (answer.behavior !== 'deny') return refuse(`${expected} (behavior is ${JSON.stringify(answer.behavior) ?? 'missing'}).`);
  const message = typeof answer.message === 'string' && answer.message.trim() !== '' ? clip(answer.message) : `The person approving this run denied ${toolName}.`;
  return { decision: { behavior: 'deny', message }, answered: true };
}

/**
 * `approvals: 'client'` for Claude Code (SPEC "Interactive runs"): each of the
 * CLI's permission prompts becomes a client call of the `approve` tool, input
 * `{tool, input}`, which a person answers through the relay.
 *
 * The adapter serves a permission prompt tool on its MCP bridge (and passes
 * `--permission-prompt-tool mcp__tanstack__<its name>`) only when the chat has
 * a sandbox policy, and its own resolver decides from that policy without
 * asking anyone. So `middleware()` provides an empty policy (no rule, no mode:
 * the adapter then adds no flag, and the harness's explicit permission mode
 * stays) and a bridge provisioner whose prompt handler is `decide`.
 *
 * The call is in the log as any tool call: `TOOL_CALL_START/ARGS/END` named
 * `approve`, the `tool-input-available` request (`client: true`), then
 * `TOOL_CALL_RESULT` with the decision the CLI got. Its id is the id of the
 * model's call it is about, with `-approve` after it, and it is written only
 * once the stream has shown that call, so the approval follows the call it
 * gates in the log.
 */
export class ClientApprovals {
  readonly #tools: HostTools;
  readonly #writer: ChunkWriter;
  readonly #waitMs: number;
  /** Tool call ids whose `TOOL_CALL_END` the harness has written; `''` once any chunk was. */
  readonly #shown = new Set<string>();
  readonly #waiting = new Map<string, (() => void)[]>();
  readonly #used = new Set<string>();

  constructor(tools: HostTools, writer: ChunkWriter, waitMs = STREAM_CALL_WAIT_MS) {
    this.#tools = tools;
    this.#writer = writer;
    this.#waitMs = waitMs;
  }

  /** The `chat()` middleware that makes the adapter ask `decide` through its bridge. */
  async middleware() {
    const sandbox = await import('@tanstack/ai-sandbox');
    const provisioner = this.provisioner(sandbox.nodeHttpBridgeProvisioner);
    return {
      name: 'client-approvals',
      provides: [sandbox.SandboxPolicyCapability, sandbox.ToolBridgeProvisionerCapability],
      setup(ctx: Parameters<typeof sandbox.provideSandboxPolicy>[0]) {
        sandbox.provideSandboxPolicy(ctx, {});
        sandbox.provideToolBridgeProvisioner(ctx, provisioner);
      },
    };
  }

  /** `base`, with the permission prompt (when the adapter asks for one) answered by `decide`. */
  provisioner(base: ToolBridgeProvisioner): ToolBridgeProvisioner {
    return {
      provision: (tools, options) => {
        const { permission, signal } = options;
        if (permission === undefined) return base.provision(tools, options);
        return base.provision(tools, { ...options, permission: { toolName: permission.toolName, resolve: (request) => this.decide(request, signal) } });
      },
    };
  }

  /** `stream` unchanged, each `TOOL_CALL_END` noted once the consumer has written it (see `BridgedHostTools.observe`). */
  async *observe<C extends { readonly type: unknown }>(stream: AsyncIterable<C>): AsyncGenerator<C> {
    for await (const chunk of stream) {
      yield chunk;
      this.#mark('');
      const { toolCallId } = chunk as unknown as { toolCallId?: unknown };
      if (chunk.type === 'TOOL_CALL_END' && typeof toolCallId === 'string') this.#mark(toolCallId);
    }
  }

  /** One permission prompt: the `approve` call, its answer, the CLI's decision. Never throws: a failure denies. */
  async decide(args: unknown, signal?: AbortSignal): Promise<PermissionDecision> {
    const request = parsePermissionRequest(args);
    try {
      await this.#afterShown(request.toolUseId ?? '', signal);
      const toolCallId = this.#idFor(request.toolUseId);
      const input = { tool: request.toolName, input: request.input };
      this.#write({ type: 'TOOL_CALL_START', toolCallId, toolCallName: APPROVAL_TOOL_NAME, toolName: APPROVAL_TOOL_NAME });
      this.#write({ type: 'TOOL_CALL_ARGS', toolCallId, delta: JSON.stringify(input) });
      this.#write({ type: 'TOOL_CALL_END', toolCallId, toolCallName: APPROVAL_TOOL_NAME, toolName: APPROVAL_TOOL_NAME, input });
      const outcome = await this.#tools.call({ toolCallId, name: APPROVAL_TOOL_NAME, input, ...(signal !== undefined ? { signal } : {}) });
      const { decision, answered } = decisionOf(outcome, request.toolName);
      this.#write({ type: 'TOOL_CALL_RESULT', messageId: `${toolCallId}-result`, toolCallId, role: 'tool', content: JSON.stringify(decision), ...(answered ? {} : { state: 'output-error' }) });
      return decision;
    } catch (error) {
      return { behavior: 'deny', message: clip(`${request.toolName} was not run: the approval failed (${error instanceof Error ? error.message : String(error)}).`) };
    }
  }

  #write(chunk: WireChunk): void {
    for (const wire of toWireShape({ ...chunk, timestamp: Date.now() })) void this.#writer.write(wire);
  }

  #mark(key: string): void {
    this.#shown.add(key);
    for (const wake of this.#waiting.get(key) ?? []) wake();
    this.#waiting.delete(key);
  }

  /** Resolves once the stream showed `key`'s call (any chunk, for `''`), or after the wait bound: the CLI always writes the call first. */
  #afterShown(key: string, signal?: AbortSignal): Promise<void> {
    if (this.#shown.has(key)) return Promise.resolve();
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal?.reason ?? new Error('aborted'));
      };
      const timer = setTimeout(done, this.#waitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.set(key, [...(this.#waiting.get(key) ?? []), done]);
    });
  }

  /** `<tool_use_id>-approve`, unique within the run (a second prompt for one call gets `-2`, …); a fresh id without a usable one. */
  #idFor(toolUseId: string | undefined): string {
    const base = toolUseId !== undefined && TOOL_CALL_ID_PATTERN.test(`${toolUseId}-approve-99`) ? `${toolUseId}-approve` : `approve_${randomUUID()}`;
    let id = base;
    for (let n = 2; this.#used.has(id); n++) id = `${base}-${n}`;
    this.#used.add(id);
    return id;
  }
}
