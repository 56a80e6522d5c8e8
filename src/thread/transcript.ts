import type { ModelMessage, ToolCall } from '@tanstack/ai';
import { hostToolCallOf, isObject } from '../protocol/index.ts';

/**
 * A harness runs its tools inside the container, so its `TOOL_CALL_*` chunks
 * are only relayed and no assistant message records them. `foldRun` writes a
 * finished run (any terminal status) into the thread's transcript the way
 * TanStack AI's own chat loop records a tool-using turn:
 *
 * - One assistant message per model step: `{ content: text || null, toolCalls }`,
 *   the text that preceded the calls on the same message, as
 *   `TextEngine.addAssistantToolCallMessage` builds it; then one `role: 'tool'`
 *   message per call, in call order, as `ToolCallManager.executeTools` returns them.
 * - A step ends when text follows its calls, when a call starts after one of its
 *   calls has a result (the tools ran, so this is a later response), or when
 *   text with another message id begins (each streamed message keeps its id).
 * - Calls are ordered by `TOOL_CALL_START`, whatever order their ends and
 *   results arrived in; each result follows its own call's message.
 * - Reasoning is not kept: `thinking` is replayed to the relay's provider, which
 *   cannot verify another model's reasoning.
 * - A host tool call (the run's own tools, SPEC "Workspace and host tools": its
 *   `tool-input-available` chunk names it) ran outside the sandbox, through
 *   the relay, so it is not marked `sandboxObserved` and the next turn
 *   replays it to the provider like any tool call of its own.
 */

/** Harness tool calls (and their results) carry this in `metadata`. */
const OBSERVED_KEY = 'sandboxObserved';

export interface FoldTurn {
  userMessages: readonly ModelMessage[];
  /** The run's `StreamChunk`s as stored; each is read field by field, so JSON from storage needs no cast. */
  chunks: readonly unknown[];
}

type Fields = Record<string, unknown>;

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function observed(): { sandboxObserved: true } {
  return { [OBSERVED_KEY]: true };
}

/** True for a tool call the harness ran in its sandbox, or a message that carries such calls or their result. */
export function isSandboxToolCall(item: ModelMessage | ToolCall): boolean {
  return isObject(item.metadata) && item.metadata[OBSERVED_KEY] === true;
}

interface Segment {
  messageId: string;
  text: string;
}

interface Call {
  id: string;
  name: string;
  parentMessageId: string | undefined;
  deltas: string;
  /** The parsed `input` of `TOOL_CALL_END`. */
  input: object | undefined;
  ended: boolean;
  /** A `TOOL_CALL_RESULT` arrived, whatever its content. */
  ran: boolean;
  /** The relay executed it (a host tool), not the harness's sandbox. */
  host: boolean;
  result: string | undefined;
}

type Event = { kind: 'text'; segment: Segment } | { kind: 'call'; call: Call } | { kind: 'result'; call: Call };

/** `TOOL_CALL_END`'s parsed input, where 0.58's wire shape puts it: `metadata.tanstack.input`. */
function inputOf(chunk: Fields): object | undefined {
  const tanstack = isObject(chunk.metadata) ? chunk.metadata.tanstack : undefined;
  const input = isObject(tanstack) ? tanstack.input : undefined;
  // A tool's input is an object; anything else says nothing better than the streamed text.
  return typeof input === 'object' && input !== null ? input : undefined;
}

/**
 * The run's texts, calls and results in the order they happened. A replay
 * re-emits chunks, so a call is created once; a repeated START restarts an
 * unfinished call's arguments, and chunks for a finished call are ignored.
 */
function record(chunks: FoldTurn['chunks'], knownCalls: ReadonlySet<string>): Event[] {
  const timeline: Event[] = [];
  const openText = new Map<string, Segment>();
  const calls = new Map<string, Call>();
  const openCall = (id: string | undefined) => {
    const call = id === undefined ? undefined : calls.get(id);
    return call === undefined || call.ended ? undefined : call;
  };

  for (const chunk of chunks) {
    if (!isObject(chunk)) continue;
    const messageId = str(chunk.messageId) ?? '';
    const toolCallId = nonEmpty(chunk.toolCallId);
    switch (chunk.type) {
      case 'TEXT_MESSAGE_START':
      case 'TEXT_MESSAGE_CONTENT': {
        let segment = openText.get(messageId);
        if (segment === undefined) {
          segment = { messageId, text: '' };
          openText.set(messageId, segment);
          timeline.push({ kind: 'text', segment });
        } else if (chunk.type === 'TEXT_MESSAGE_START') {
          segment.text = ''; // a replay restarts a message that never ended
        }
        if (chunk.type === 'TEXT_MESSAGE_CONTENT') segment.text += str(chunk.delta) ?? '';
        break;
      }
      case 'TEXT_MESSAGE_END':
        openText.delete(messageId);
        break;
      case 'TOOL_CALL_START': {
        if (toolCallId === undefined || knownCalls.has(toolCallId)) break;
        const known = calls.get(toolCallId);
        if (known !== undefined) {
          if (!known.ended) known.deltas = '';
          break;
        }
        const name = nonEmpty(chunk.toolCallName) ?? '';
        const call: Call = { id: toolCallId, name, parentMessageId: nonEmpty(chunk.parentMessageId), deltas: '', input: undefined, ended: false, ran: false, host: false, result: undefined };
        calls.set(toolCallId, call);
        timeline.push({ kind: 'call', call });
        break;
      }
      case 'TOOL_CALL_ARGS': {
        const call = openCall(toolCallId);
        if (call === undefined) break;
        call.deltas += str(chunk.delta) ?? '';
        break;
      }
      case 'TOOL_CALL_END': {
        const call = openCall(toolCallId);
        if (call === undefined) break;
        call.ended = true;
        call.input = inputOf(chunk);
        break;
      }
      case 'CUSTOM': {
        const asked = hostToolCallOf(chunk);
        const call = asked === null ? undefined : calls.get(asked.toolCallId);
        // An approval is about the harness's own action: kept, but marked like a harness call, so never replayed.
        if (call !== undefined && asked?.sandboxObserved !== true) call.host = true;
        break;
      }
      case 'TOOL_CALL_RESULT': {
        const call = toolCallId === undefined ? undefined : calls.get(toolCallId);
        if (call === undefined) break;
        call.result ??= str(chunk.content);
        if (!call.ran) timeline.push({ kind: 'result', call });
        call.ran = true;
        break;
      }
    }
  }
  return timeline;
}

interface Step {
  messageId: string | undefined;
  text: string;
  calls: Call[];
  ran: boolean;
}

/** Groups the timeline into model steps (see the module comment). `seenText` holds `[id, text]` keys already written. */
function steps(timeline: readonly Event[], seenText: Set<string>): Step[] {
  const out: Step[] = [];
  let step: Step = { messageId: undefined, text: '', calls: [], ran: false };
  const next = () => {
    out.push(step);
    step = { messageId: undefined, text: '', calls: [], ran: false };
  };
  for (const event of timeline) {
    if (event.kind === 'text') {
      const { messageId, text } = event.segment;
      const key = JSON.stringify([messageId, text]);
      // A finished message seen again with the same text is a replay.
      if (text === '' || seenText.has(key)) continue;
      seenText.add(key);
      if (step.calls.length > 0 || (step.text !== '' && step.messageId !== messageId)) next();
      step.text += text;
      step.messageId ??= messageId;
    } else if (event.kind === 'call') {
      if (step.ran) next();
      step.calls.push(event.call);
    } else if (step.calls.includes(event.call)) {
      step.ran = true;
    }
  }
  next();
  return out;
}

function argumentsOf(call: Call): string {
  if (call.input !== undefined) {
    try {
      return JSON.stringify(call.input);
    } catch {
      // A value JSON cannot hold (a BigInt, a cycle) falls back to the streamed text.
    }
  }
  // With no END (a failed run) the streamed text is kept as is, even if cut short.
  return call.deltas;
}

function messagesOf(step: Step, usedIds: Set<string>): ModelMessage[] {
  // A call with no name is dropped, as ToolCallManager.getToolCalls drops it: providers reject it.
  const calls = step.calls.filter((call) => call.name !== '');
  if (step.text === '' && calls.length === 0) return [];
  const message: ModelMessage = { role: 'assistant', content: step.text === '' ? null : step.text };
  const id = nonEmpty(step.messageId) ?? calls[0]?.parentMessageId;
  // Ids let a UI keep a message's identity; two messages with one id would collide.
  if (id !== undefined && !usedIds.has(id)) {
    usedIds.add(id);
    message.id = id;
  }
  if (calls.length === 0) return [message];
  const marked = (call: Call) => (call.host ? {} : { metadata: observed() });
  message.toolCalls = calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: argumentsOf(call) }, ...marked(call) }));
  if (calls.some((call) => !call.host)) message.metadata = observed();
  const results: ModelMessage[] = [];
  for (const call of calls) {
    if (call.result !== undefined) results.push({ role: 'tool', content: call.result, toolCallId: call.id, ...marked(call) });
  }
  return [message, ...results];
}

/**
 * The thread's transcript after a run: `transcript`, the turn's user messages,
 * then the run's assistant text, harness tool calls and their string results.
 * A call id already in the transcript is never written again. Inputs are not mutated.
 *
 * @example
 * ```ts
 * const next = foldRun(thread.messages, { userMessages: [prompt], chunks: await log.chunks(runId) });
 * const request = stripObservedToolCalls([...next, followUp]);
 * ```
 */
export function foldRun(transcript: readonly ModelMessage[], turn: FoldTurn): ModelMessage[] {
  const before = [...transcript, ...turn.userMessages];
  const knownCalls = new Set<string>();
  const usedIds = new Set<string>();
  const seenText = new Set<string>();
  for (const message of before) {
    if (typeof message.id === 'string') usedIds.add(message.id);
    if (typeof message.toolCallId === 'string') knownCalls.add(message.toolCallId);
    if (Array.isArray(message.toolCalls)) {
      for (const call of message.toolCalls) if (isObject(call) && typeof call.id === 'string') knownCalls.add(call.id);
    }
    if (message.role === 'assistant' && typeof message.id === 'string' && typeof message.content === 'string') {
      seenText.add(JSON.stringify([message.id, message.content]));
    }
  }
  const folded = steps(record(turn.chunks, knownCalls), seenText).flatMap((step) => messagesOf(step, usedIds));
  return [...before, ...folded];
}
