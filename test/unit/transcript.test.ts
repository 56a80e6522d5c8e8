import type { ModelMessage, ToolCall } from '@tanstack/ai';
import { describe, expect, it } from 'vitest';
import { stripObservedToolCalls } from '../../src/thread/strip.ts';
import { foldRun, isSandboxToolCall } from '../../src/thread/transcript.ts';
import argsDeltas from '../fixtures/chunks/args-deltas.json';
import claudeCode from '../fixtures/chunks/claude-code-interleaved.json';
import demo from '../fixtures/chunks/demo-harness.json';
import failedRun from '../fixtures/chunks/failed-run.json';
import nonStringResult from '../fixtures/chunks/non-string-result.json';
import replayedMidCall from '../fixtures/chunks/replayed-mid-call.json';
import truncatedArgs from '../fixtures/chunks/truncated-args.json';

const OBSERVED = { sandboxObserved: true };
const prompt: ModelMessage = { role: 'user', content: 'count these words' };
// The demo harness's three 16-byte deltas for that prompt.
const DEMO_TEXT = '[0] count these [1] count these [2] count these ';

function fold(chunks: readonly unknown[], transcript: ModelMessage[] = []): ModelMessage[] {
  return foldRun(transcript, { userMessages: [prompt], chunks }).slice(transcript.length + 1);
}

function callIds(messages: readonly ModelMessage[]): string[] {
  return messages.flatMap((message) => (message.toolCalls ?? []).map((call) => call.id));
}

function call(id: string, name: string, args: string): ToolCall {
  return { id, type: 'function', function: { name, arguments: args }, metadata: OBSERVED };
}

function result(toolCallId: string, content: string): ModelMessage {
  return { role: 'tool', content, toolCallId, metadata: OBSERVED };
}

describe('foldRun', () => {
  it('writes a demo-harness run as TanStack AI records a tool-using turn, without the reasoning', () => {
    expect(fold(demo)).toEqual([
      {
        role: 'assistant',
        content: DEMO_TEXT,
        id: 'run_demo01-text-1',
        toolCalls: [call('run_demo01-tool-1', 'count_words', '{"text":"count these words"}')],
        metadata: OBSERVED,
      },
      result('run_demo01-tool-1', '{"words":3}'),
      { role: 'assistant', content: 'Done: 3 deltas streamed.', id: 'run_demo01-text-2' },
    ]);
  });

  it('puts the existing transcript and the user messages first, and mutates neither input', () => {
    const transcript: ModelMessage[] = [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }];
    const userMessages = [prompt];
    const chunks = structuredClone(demo);
    const snapshot = structuredClone({ transcript, userMessages, chunks });
    const next = foldRun(transcript, { userMessages, chunks });
    expect(next.slice(0, 3)).toEqual([...transcript, prompt]);
    expect(next).toHaveLength(6);
    expect({ transcript, userMessages, chunks }).toEqual(snapshot);
  });

  it('orders interleaved calls by START, each result after its call, whatever order ends and results came in', () => {
    expect(fold(claudeCode)).toEqual([
      {
        role: 'assistant',
        content: 'Let me look at the entry point.',
        id: 'msg_01',
        toolCalls: [
          call('toolu_01Read', 'Read', '{"file_path":"/workspace/src/index.ts"}'),
          call('toolu_02Grep', 'Grep', '{"pattern":"TODO","path":"/workspace/src"}'),
        ],
        metadata: OBSERVED,
      },
      result('toolu_01Read', 'export default app;\n'),
      result('toolu_02Grep', 'src/index.ts:12: // TODO: retry'),
      { role: 'assistant', content: 'There is one TODO.', id: 'msg_02' },
    ]);
  });

  it('starts a new assistant message for a call that starts after an earlier call has its result', () => {
    const chunks = [
      { type: 'TOOL_CALL_START', toolCallId: 'a', toolCallName: 'bash' },
      { type: 'TOOL_CALL_END', toolCallId: 'a', metadata: { tanstack: { input: { command: 'ls' } } } },
      { type: 'TOOL_CALL_RESULT', toolCallId: 'a', messageId: 'ra', content: 'x' },
      { type: 'TOOL_CALL_START', toolCallId: 'b', toolCallName: 'bash' },
      { type: 'TOOL_CALL_END', toolCallId: 'b', metadata: { tanstack: { input: { command: 'pwd' } } } },
      { type: 'TOOL_CALL_RESULT', toolCallId: 'b', messageId: 'rb', content: '/' },
    ];
    expect(fold(chunks)).toEqual([
      { role: 'assistant', content: null, toolCalls: [call('a', 'bash', '{"command":"ls"}')], metadata: OBSERVED },
      result('a', 'x'),
      { role: 'assistant', content: null, toolCalls: [call('b', 'bash', '{"command":"pwd"}')], metadata: OBSERVED },
      result('b', '/'),
    ]);
  });

  describe('replays', () => {
    it.each([
      ['demo-harness', demo],
      ['claude-code', claudeCode],
    ])('writes each call, result and text once when the %s run is replayed whole', (_, chunks) => {
      expect(fold([...chunks, ...chunks])).toEqual(fold(chunks));
    });

    it('restarts a call and a text that were cut off and replayed from their start', () => {
      expect(fold(replayedMidCall)).toEqual([
        { role: 'assistant', content: 'Checking.', id: 'm1', toolCalls: [call('call_r', 'bash', '{"command":"date"}')], metadata: OBSERVED },
        result('call_r', 'Mon'),
      ]);
    });

    it('never writes a call id the transcript already holds, nor its result', () => {
      const first = foldRun([], { userMessages: [prompt], chunks: claudeCode });
      const again = foldRun(first, { userMessages: [], chunks: claudeCode });
      expect(again).toEqual(first);
      expect(callIds(again)).toEqual(['toolu_01Read', 'toolu_02Grep']);
    });

    it('keeps a second text block of one message id when its text differs', () => {
      const chunks = [
        { type: 'TEXT_MESSAGE_START', messageId: 'msg_01' },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_01', delta: 'One. ' },
        { type: 'TEXT_MESSAGE_END', messageId: 'msg_01' },
        { type: 'TEXT_MESSAGE_START', messageId: 'msg_01' },
        { type: 'TEXT_MESSAGE_CONTENT', messageId: 'msg_01', delta: 'Two.' },
        { type: 'TEXT_MESSAGE_END', messageId: 'msg_01' },
      ];
      expect(fold(chunks)).toEqual([{ role: 'assistant', content: 'One. Two.', id: 'msg_01' }]);
    });
  });

  describe('arguments', () => {
    it('are the stitched deltas', () => {
      const [x, , y] = fold(argsDeltas);
      expect(x?.toolCalls?.[0]?.function.arguments).toBe('{"command":"ls -la"}');
      expect(y?.toolCalls?.[0]?.function.arguments).toBe('{"command":"pwd"}');
    });

    it('take the parsed `input` on TOOL_CALL_END over a truncated args stream', () => {
      expect(fold(truncatedArgs)[0]?.toolCalls).toEqual([call('call_w', 'write_file', '{"path":"notes.md","content":"# Notes\\n"}')]);
    });

    it('read the parsed input from `metadata.tanstack.input`, where 0.58 puts it', () => {
      const chunks = [
        { type: 'TOOL_CALL_START', toolCallId: 'a', toolCallName: 'Read' },
        { type: 'TOOL_CALL_ARGS', toolCallId: 'a', delta: '{"file_path":"x"' },
        { type: 'TOOL_CALL_END', toolCallId: 'a', metadata: { tanstack: { input: { file_path: 'x.ts' } } } },
      ];
      expect(fold(chunks)[0]?.toolCalls).toEqual([call('a', 'Read', '{"file_path":"x.ts"}')]);
    });

    it('ignore an END `input` that is not an object', () => {
      const chunks = [
        { type: 'TOOL_CALL_START', toolCallId: 'a', toolCallName: 'bash' },
        { type: 'TOOL_CALL_ARGS', toolCallId: 'a', delta: '{"command":"ls"}' },
        { type: 'TOOL_CALL_END', toolCallId: 'a', metadata: { tanstack: { input: null } } },
      ];
      expect(fold(chunks)[0]?.toolCalls?.[0]?.function.arguments).toBe('{"command":"ls"}');
    });
  });

  it('stores a result only when its content is a string', () => {
    expect(fold(nonStringResult)).toEqual([
      { role: 'assistant', content: null, toolCalls: [call('call_o', 'list_files', '{"dir":"."}')], metadata: OBSERVED },
      { role: 'assistant', content: 'Two files.', id: 'm_after' },
    ]);
  });

  it('folds what a failed run has: partial text, every call with its best-known arguments, results it got', () => {
    expect(fold(failedRun)).toEqual([
      { role: 'assistant', content: 'Running the tests.', id: 'm1', toolCalls: [call('call_1', 'bash', '{"command":"npm test"}')], metadata: OBSERVED },
      result('call_1', '1 failing'),
      {
        role: 'assistant',
        content: null,
        toolCalls: [call('call_2', 'read_file', '{"path":"test/a.test.ts"}'), call('call_3', 'edit_file', '{"path":"src/a.ts","old":"ret')],
        metadata: OBSERVED,
      },
      { role: 'assistant', content: 'The fix is to ret', id: 'm2' },
    ]);
  });

  it('skips what it cannot read: non-objects, calls never started, calls with no name', () => {
    const chunks = [
      null,
      'TOOL_CALL_START',
      { type: 'TOOL_CALL_ARGS', toolCallId: 'ghost', delta: '{}' },
      { type: 'TOOL_CALL_RESULT', toolCallId: 'ghost', content: 'boo' },
      { type: 'TOOL_CALL_START', toolCallId: 'nameless' },
      { type: 'TOOL_CALL_RESULT', toolCallId: 'nameless', content: 'x' },
      { type: 'TEXT_MESSAGE_CONTENT', messageId: 7, delta: 'ok' },
    ];
    expect(fold(chunks)).toEqual([{ role: 'assistant', content: 'ok' }]);
  });

  it('does not give two messages the same id', () => {
    const transcript: ModelMessage[] = [{ role: 'assistant', content: 'earlier', id: 'run_demo01-text-2' }];
    const folded = fold(demo, transcript);
    expect(folded.at(-1)).toEqual({ role: 'assistant', content: 'Done: 3 deltas streamed.' });
  });
});

describe('isSandboxToolCall', () => {
  it('is true for folded calls, the messages carrying them and their results, false otherwise', () => {
    const [assistant, tool, closing] = fold(demo);
    expect(assistant && isSandboxToolCall(assistant)).toBe(true);
    expect(assistant?.toolCalls?.every(isSandboxToolCall)).toBe(true);
    expect(tool && isSandboxToolCall(tool)).toBe(true);
    expect(closing && isSandboxToolCall(closing)).toBe(false);
    expect(isSandboxToolCall({ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' }, metadata: 'sandboxObserved' })).toBe(false);
  });
});

describe('stripObservedToolCalls', () => {
  const own: ToolCall = { id: 'own_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } };

  it('drops fully observed tool-call messages and their results, keeping the text as a plain message', () => {
    const transcript = foldRun([], { userMessages: [prompt], chunks: demo });
    expect(stripObservedToolCalls(transcript)).toEqual([
      prompt,
      { role: 'assistant', content: DEMO_TEXT, id: 'run_demo01-text-1' },
      { role: 'assistant', content: 'Done: 3 deltas streamed.', id: 'run_demo01-text-2' },
    ]);
  });

  it('drops an assistant message with no text once its observed calls are gone', () => {
    const transcript = foldRun([], { userMessages: [prompt], chunks: nonStringResult });
    expect(stripObservedToolCalls(transcript)).toEqual([prompt, { role: 'assistant', content: 'Two files.', id: 'm_after' }]);
  });

  it('keeps unobserved calls and their results on a mixed message, and other metadata', () => {
    const messages: ModelMessage[] = [
      prompt,
      {
        role: 'assistant',
        content: null,
        toolCalls: [call('obs_1', 'bash', '{}'), own],
        metadata: { sandboxObserved: true, tanstack: { createdAt: 1 } },
      },
      result('obs_1', 'ok'),
      { role: 'tool', content: 'sunny', toolCallId: 'own_1' },
    ];
    const snapshot = structuredClone(messages);
    expect(stripObservedToolCalls(messages)).toEqual([
      prompt,
      { role: 'assistant', content: null, toolCalls: [own], metadata: { tanstack: { createdAt: 1 } } },
      { role: 'tool', content: 'sunny', toolCallId: 'own_1' },
    ]);
    expect(messages).toEqual(snapshot);
  });

  it('drops an orphan result of a dropped call even when the result itself is unmarked', () => {
    const messages: ModelMessage[] = [
      { role: 'assistant', content: null, toolCalls: [call('obs_1', 'bash', '{}')], metadata: OBSERVED },
      { role: 'tool', content: 'ok', toolCallId: 'obs_1' },
      { role: 'assistant', content: 'done' },
    ];
    expect(stripObservedToolCalls(messages)).toEqual([{ role: 'assistant', content: 'done' }]);
  });

  it('leaves a transcript with no observed calls as it was', () => {
    const messages: ModelMessage[] = [prompt, { role: 'assistant', content: null, toolCalls: [own] }, { role: 'tool', content: 'sunny', toolCallId: 'own_1' }];
    const stripped = stripObservedToolCalls(messages);
    expect(stripped).toEqual(messages);
    expect(stripped[1]).toBe(messages[1]);
  });
});

describe('host tool calls in the transcript', () => {
  const chunksOf = (id: string, name: string, extra: Record<string, unknown> = {}) => [
    { type: 'TOOL_CALL_START', toolCallId: id, toolCallName: name },
    { type: 'TOOL_CALL_ARGS', toolCallId: id, delta: '{"q":1}' },
    { type: 'TOOL_CALL_END', toolCallId: id },
    { type: 'CUSTOM', name: 'tool-input-available', value: { toolCallId: id, toolName: name, input: { q: 1 }, ...extra } },
    { type: 'TOOL_CALL_RESULT', toolCallId: id, messageId: `${id}-r`, content: '"ok"' },
  ];

  it('keeps a host call unmarked, so the next turn replays it, and marks an approval like a harness call, so it never is', () => {
    const messages = fold([...chunksOf('host_1', 'lookup'), ...chunksOf('toolu_1-approve', 'approve', { client: true, sandboxObserved: true })]);
    const calls = messages.flatMap((message) => message.toolCalls ?? []);
    expect(calls.find((c) => c.id === 'host_1')?.metadata).toBeUndefined();
    expect(calls.find((c) => c.id === 'toolu_1-approve')?.metadata).toEqual(OBSERVED);
    const next = stripObservedToolCalls(messages);
    expect(callIds(next)).toEqual(['host_1']);
    expect(next.filter((message) => message.role === 'tool').map((message) => message.toolCallId)).toEqual(['host_1']);
  });
});
