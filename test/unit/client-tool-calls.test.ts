import { describe, expect, it } from 'vitest';
import { answerToolCall, PendingToolCalls, ToolAnswerError } from '../../src/client/index.ts';
import { HOST_TOOL_CALL_EVENT, type RunView } from '../../src/protocol/index.ts';

const asked = (toolCallId: string, client = true) => ({ type: 'CUSTOM', name: HOST_TOOL_CALL_EVENT, timestamp: 5, value: { toolCallId, toolName: 'ask', input: { q: toolCallId }, ...(client ? { client: true } : {}) } });
const result = (toolCallId: string) => ({ type: 'TOOL_CALL_RESULT', toolCallId, messageId: 'm', content: '"ok"' });
const record = (pending: RunView['pendingToolCalls']): RunView => ({ runId: 'run_1', threadId: 't', status: 'running', lastSeq: 3, startedAt: 1, updatedAt: 2, ...(pending ? { pendingToolCalls: pending } : {}) });

describe('the client SDK: pending tool calls', () => {
  it('lists client calls from their request chunk until their result, and ignores webhook calls', () => {
    const pending = new PendingToolCalls();
    expect(pending.apply(asked('a'))).toBe(true);
    expect(pending.apply(asked('w', false))).toBe(false);
    expect(pending.apply(asked('a'))).toBe(false);
    expect(pending.list()).toEqual([{ toolCallId: 'a', name: 'ask', input: { q: 'a' }, requestedAt: 5 }]);
    expect(pending.apply(result('a'))).toBe(true);
    expect(pending.list()).toEqual([]);
  });

  it("seeds from the record a late tail's fromSeq skipped, and never revives a call already settled", () => {
    const pending = new PendingToolCalls();
    pending.apply(result('done'));
    expect(pending.seed(record([{ toolCallId: 'early', name: 'ask', input: {}, requestedAt: 1 }, { toolCallId: 'done', name: 'ask', input: {}, requestedAt: 1 }]))).toBe(true);
    expect(pending.list().map((call) => call.toolCallId)).toEqual(['early']);
    expect(pending.seed(record(undefined))).toBe(false);
  });
});

describe('the client SDK: answering', () => {
  it('POSTs {toolCallId, output} with the token, and returns the record', async () => {
    let seen: { url: string; body: string } | undefined;
    const fetcher = (async (url: string, init: RequestInit) => {
      seen = { url, body: String(init.body) };
      return Response.json(record(undefined));
    }) as unknown as typeof fetch;
    const answered = await answerToolCall(fetcher, { baseUrl: 'https://relay.example/base', runId: 'run_1', token: 'tok' }, 'a', { output: { yes: true } });
    expect(answered.runId).toBe('run_1');
    expect(seen!.url).toBe('https://relay.example/base/runs/run_1/tool-results?token=tok');
    expect(JSON.parse(seen!.body)).toEqual({ toolCallId: 'a', output: { yes: true } });
  });

  it("throws the relay's code when another tab answered first", async () => {
    const fetcher = (async () => Response.json({ error: { code: 'already_answered', message: 'first answer wins' } }, { status: 409 })) as unknown as typeof fetch;
    const error = await answerToolCall(fetcher, { baseUrl: 'http://127.0.0.1:8787', runId: 'run_1' }, 'a', { error: 'no' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolAnswerError);
    expect(error).toMatchObject({ status: 409, code: 'already_answered' });
  });
});
