import type { DemoOptions, RunnerRunRequest, ToolOutcome } from '../../../src/protocol/index.ts';
import type { WireChunk } from '../chunk-writer.ts';
import { toWireShape } from './wire-shape.ts';

/** A scripted host tool call, as the harness hands it to `HostTools.call`. */
export interface DemoHostCall {
  toolCallId: string;
  name: string;
  input: Record<string, unknown>;
}

/**
 * The demo harness's run, as a pure sequence: what to write, where a fault
 * strikes, and where a host tool is called. Pure so a test can compute
 * exactly what a run must stream.
 *
 * Fault points count text deltas (0-based): at delta `k` the fault replaces
 * that delta, so deltas `0..k-1` were written before it. A point at or past
 * `chunks` never fires.
 *
 * A `host-tool` step is a question: whoever drives the script calls the tool
 * and passes its outcome to the generator's `next(outcome)`; the script then
 * writes the call's result from it.
 */
export type DemoStep = { kind: 'chunk'; chunk: WireChunk } | { kind: 'crash' } | { kind: 'stall' } | { kind: 'host-tool'; call: DemoHostCall };

export type DemoInput = Pick<RunnerRunRequest, 'runId' | 'threadId' | 'messages'>;

const FALLBACK_PROMPT = 'hello';
const TOOL_NAME = 'count_words';

/** The last user message's text, made printable ASCII so a delta's characters are its bytes. */
export function demoPrompt(messages: RunnerRunRequest['messages']): string {
  const user = [...messages].reverse().find((message) => message.role === 'user');
  const content: unknown = user?.content;
  let text = '';
  if (typeof content === 'string') text = content;
  else if (Array.isArray(content)) {
    text = content
      .map((part: unknown) => (typeof part === 'object' && part !== null && 'content' in part && typeof part.content === 'string' ? part.content : ''))
      .join(' ');
  }
  const ascii = text.replace(/[^\x20-\x7e]+/g, ' ').replace(/\s+/g, ' ').trim();
  return ascii === '' ? FALLBACK_PROMPT : ascii;
}

/**
 * The text the deltas are cut from, read in a loop: it echoes the prompt so a
 * reader can tell runs apart, and reads like an answer in the demo page.
 */
function demoAnswer(prompt: string): string {
  return (
    `You asked: "${prompt}". This is the demo harness answering. Every piece of this text is a chunk with its own seq, ` +
    'stored by the run object before any client sees it. Reload the page, drop the connection or open a second tab: ' +
    'the stream resumes from the last seq you have, with nothing missing and nothing twice. '
  );
}

/** Text delta `index`: exactly `bytes` ASCII characters, the next slice of the looping answer. */
export function demoTextDelta(prompt: string, index: number, bytes: number): string {
  const answer = demoAnswer(prompt);
  const start = (index * bytes) % answer.length;
  let delta = answer.slice(start, start + bytes);
  while (delta.length < bytes) delta += answer.slice(0, bytes - delta.length);
  return delta;
}

/** The concatenated text of a run that wrote deltas `0..count-1`. */
export function demoText(prompt: string, count: number, bytes: number): string {
  let text = '';
  for (let i = 0; i < count; i++) text += demoTextDelta(prompt, i, bytes);
  return text;
}

/** The `content` of a host call's TOOL_CALL_RESULT: the output's JSON, or `{error}`'s for a failed call. */
export function demoResultContent(outcome: ToolOutcome): string {
  return JSON.stringify('error' in outcome ? { error: outcome.error } : outcome.output);
}

/** What a driver that answers no call (a plain `for…of`) gets for each: the run goes on with an error result. */
const UNANSWERED: ToolOutcome = { error: 'the demo script was driven without tool outcomes' };

export function* demoScript(input: DemoInput, options: DemoOptions, now: () => number = Date.now): Generator<DemoStep, void, ToolOutcome | undefined> {
  const { runId, threadId } = input;
  const prompt = demoPrompt(input.messages);
  const words = prompt.split(' ').length;
  // In the relay's one dialect, as every harness writes it (extras such as `input` under metadata.tanstack).
  const chunk = (fields: WireChunk): DemoStep => ({ kind: 'chunk', chunk: toWireShape({ ...fields, timestamp: now() })[0]! });
  const reasoningId = `${runId}-reasoning`;
  const textId = `${runId}-text-1`;
  const toolCallId = `${runId}-tool-1`;

  yield chunk({ type: 'RUN_STARTED', runId, threadId });
  yield chunk({ type: 'REASONING_START', messageId: reasoningId });
  yield chunk({ type: 'REASONING_MESSAGE_START', messageId: reasoningId, role: 'reasoning' });
  for (const delta of [`The prompt has ${words} words. `, `I will stream ${options.chunks} text deltas, `, `then call ${TOOL_NAME}.`]) {
    yield chunk({ type: 'REASONING_MESSAGE_CONTENT', messageId: reasoningId, delta });
  }
  yield chunk({ type: 'REASONING_MESSAGE_END', messageId: reasoningId });
  yield chunk({ type: 'REASONING_END', messageId: reasoningId });

  yield chunk({ type: 'TEXT_MESSAGE_START', messageId: textId, role: 'assistant' });
  for (let i = 0; i < options.chunks; i++) {
    if (i === options.failAt) {
      const message = `The demo harness failed at text delta ${i} (failAt).`;
      yield chunk({ type: 'RUN_ERROR', runId, threadId, message, code: 'demo_failure', error: { message, code: 'demo_failure' } });
      return;
    }
    if (i === options.crashAt) {
      yield { kind: 'crash' };
      return;
    }
    if (i === options.stallAt) {
      yield { kind: 'stall' };
      return;
    }
    yield chunk({ type: 'TEXT_MESSAGE_CONTENT', messageId: textId, delta: demoTextDelta(prompt, i, options.chunkBytes) });
  }
  yield chunk({ type: 'TEXT_MESSAGE_END', messageId: textId });

  const input_ = { text: prompt.slice(0, 80) };
  const args = JSON.stringify(input_);
  const half = Math.ceil(args.length / 2);
  yield chunk({ type: 'TOOL_CALL_START', toolCallId, toolCallName: TOOL_NAME, toolName: TOOL_NAME, parentMessageId: textId });
  yield chunk({ type: 'TOOL_CALL_ARGS', toolCallId, delta: args.slice(0, half) });
  yield chunk({ type: 'TOOL_CALL_ARGS', toolCallId, delta: args.slice(half) });
  yield chunk({ type: 'TOOL_CALL_END', toolCallId, toolCallName: TOOL_NAME, input: input_ });
  yield chunk({ type: 'TOOL_CALL_RESULT', messageId: `${runId}-tool-result-1`, toolCallId, role: 'tool', content: JSON.stringify({ words: input_.text.split(' ').length }) });

  // The run's own tools, in order: each call waits for its outcome, an error one included, and the run goes on.
  for (const [i, { name, input: callInput }] of (options.toolCalls ?? []).entries()) {
    const hostCallId = `${runId}-host-${i}`;
    yield chunk({ type: 'TOOL_CALL_START', toolCallId: hostCallId, toolCallName: name, toolName: name, parentMessageId: textId });
    yield chunk({ type: 'TOOL_CALL_ARGS', toolCallId: hostCallId, delta: JSON.stringify(callInput) });
    yield chunk({ type: 'TOOL_CALL_END', toolCallId: hostCallId, toolCallName: name, input: callInput });
    const outcome = (yield { kind: 'host-tool', call: { toolCallId: hostCallId, name, input: callInput } }) ?? UNANSWERED;
    const failed = 'error' in outcome ? { state: 'output-error' } : {};
    yield chunk({ type: 'TOOL_CALL_RESULT', messageId: `${runId}-host-result-${i}`, toolCallId: hostCallId, role: 'tool', content: demoResultContent(outcome), ...failed });
  }

  const closingId = `${runId}-text-2`;
  yield chunk({ type: 'TEXT_MESSAGE_START', messageId: closingId, role: 'assistant' });
  yield chunk({ type: 'TEXT_MESSAGE_CONTENT', messageId: closingId, delta: `Done: ${options.chunks} deltas streamed.` });
  yield chunk({ type: 'TEXT_MESSAGE_END', messageId: closingId });
  yield chunk({ type: 'RUN_FINISHED', runId, threadId, finishReason: 'stop' });
}
