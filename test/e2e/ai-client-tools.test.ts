import { toolDefinition, type StreamChunk } from '@tanstack/ai';
import { ChatClient } from '@tanstack/ai-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { relayConnection } from '../../src/client/relay-connection.ts';
import { isObject } from '../../src/protocol/index.ts';
import { postRun, waitSettled, startStack } from './stack.ts';
import type { LocalStack } from '../../scripts/local-stack.ts';

/**
 * @tanstack/ai-client's ChatClient, as published, joining a run on the local
 * stack through `relayConnection` and answering the run's client tool call
 * with its own `execute` (issue 17).
 */

let stack: LocalStack;

beforeAll(async () => {
  stack = await startStack();
});

afterAll(async () => {
  await stack?.close();
});

const ASK = { name: 'ask', inputSchema: { type: 'object' }, execute: { type: 'client' } };

async function startAsking(prompt: string, questions = ['hi']) {
  const toolCalls = questions.map((q) => ({ name: 'ask', input: { q } }));
  const run = await postRun(stack.url, { prompt, tools: [ASK], harnessOptions: { chunks: 2, delayMs: 0, toolCalls } });
  return run as typeof run & { attachToken: string };
}

/** A ChatClient with one client tool that joins `runId`, as a reloaded tab would (its resume snapshot names the run). */
function joinWithTool(run: { runId: string; attachToken: string }, execute: (input: unknown) => Promise<unknown>) {
  const chunks: StreamChunk[] = [];
  /** The bodies the adapter posted to /tool-results. */
  const answers: unknown[] = [];
  const fetchImpl: typeof fetch = (input, init) => {
    if (String(input).includes('/tool-results')) answers.push(JSON.parse(String(init?.body)));
    return fetch(input, init);
  };
  const ask = toolDefinition({ name: 'ask', description: 'Asks the person a question.', inputSchema: { type: 'object' } }).client(execute);
  const client = new ChatClient({
    connection: relayConnection({ baseUrl: stack.url, runId: run.runId, token: run.attachToken, fetchImpl }),
    tools: [ask],
    threadId: run.runId,
    initialResumeSnapshot: { resumeState: { threadId: run.runId, runId: run.runId } },
    onChunk: (chunk) => chunks.push(chunk),
  });
  client.attach();
  return { client, chunks, answers };
}

/** The ids of the run's `ask` calls, in order (the demo harness also calls its own `count_words` tool first). */
function askCallIds(chunks: StreamChunk[]): string[] {
  return chunks.flatMap((chunk) => (chunk.type === 'TOOL_CALL_START' && chunk.toolCallName === 'ask' ? [chunk.toolCallId] : []));
}

/** The TOOL_CALL_RESULT contents the client received for one call: the relay's, written once the harness had the answer. */
function resultsFor(chunks: StreamChunk[], toolCallId: string): unknown[] {
  return chunks.flatMap((chunk) => (chunk.type === 'TOOL_CALL_RESULT' && chunk.toolCallId === toolCallId ? [chunk.content] : []));
}

/**
 * Settled without an error and with no interrupt left. Its messages are not
 * compared: a rejoin replay that reasons before its first text loses that
 * assistant message in ChatClient (TanStack/ai#1422), and the demo reasons first.
 */
function expectSettled(client: ChatClient) {
  expect(client.getError()).toBeUndefined();
  expect(client.getStatus()).toBe('ready');
  expect(client.getInterrupts()).toEqual([]);
}

/** The run's own RUN_FINISHED (the adapter's interrupt has an outcome), once the client has processed it. */
const finishedFor = (chunks: StreamChunk[]) => () => expect(chunks.some((chunk) => chunk.type === 'RUN_FINISHED' && chunk.outcome?.type !== 'interrupt')).toBe(true);

async function toolMessage(threadId: string, toolCallId: string) {
  const { messages } = (await (await fetch(`${stack.url}/threads/${threadId}/messages`)).json()) as { messages: { role: string; toolCallId?: string; content?: unknown }[] };
  return messages.find((message) => message.role === 'tool' && message.toolCallId === toolCallId);
}

describe('@tanstack/ai-client ChatClient through relayConnection', () => {
  it('joins a run, runs the client tool in the client, and the run completes with its output as the TOOL_CALL_RESULT', async () => {
    const run = await startAsking('ask me');
    const inputs: unknown[] = [];
    const { client, chunks, answers } = joinWithTool(run, async (input) => {
      inputs.push(input);
      return { answer: 'hello back' };
    });

    await vi.waitFor(finishedFor(chunks), { timeout: 60_000, interval: 50 });
    const record = await waitSettled(stack.url, run.runId);
    expect(record.status).toBe('completed');
    expect(inputs).toEqual([{ q: 'hi' }]);

    const [toolCallId] = askCallIds(chunks);
    expect(answers).toEqual([{ toolCallId, output: { answer: 'hello back' } }]);
    expect(resultsFor(chunks, toolCallId!)).toEqual([JSON.stringify({ answer: 'hello back' })]);
    expect(await toolMessage(run.runId, toolCallId!)).toMatchObject({ content: JSON.stringify({ answer: 'hello back' }) });
    expectSettled(client);
    client.dispose();

    // A later tab replaying the finished run does not run the tool again: the call is answered.
    const again: unknown[] = [];
    const replay = joinWithTool(run, async (input) => {
      again.push(input);
      return { answer: 'asked twice' };
    });
    await vi.waitFor(finishedFor(replay.chunks), { timeout: 60_000, interval: 50 });
    expect(again).toEqual([]);
    expect(replay.answers).toEqual([]);
    expect(resultsFor(replay.chunks, toolCallId!)).toEqual([JSON.stringify({ answer: 'hello back' })]);
    expectSettled(replay.client);
    replay.client.dispose();
  });

  it('answers each call of a run that asks twice, a throwing execute as ChatClient reports it ({error})', async () => {
    const run = await startAsking('ask me twice', ['first', 'second']);
    const { client, chunks, answers } = joinWithTool(run, async (input) => {
      if (isObject(input) && input.q === 'first') throw new Error('the person closed the dialog');
      return { answer: 'second answer' };
    });

    await vi.waitFor(finishedFor(chunks), { timeout: 60_000, interval: 50 });
    expect((await waitSettled(stack.url, run.runId)).status).toBe('completed');
    const [first, second] = askCallIds(chunks);
    // ChatClient resumes a failed execute as payload {error}, which TanStack's own server takes as the output.
    expect(answers).toEqual([
      { toolCallId: first, output: { error: 'the person closed the dialog' } },
      { toolCallId: second, output: { answer: 'second answer' } },
    ]);
    expect(resultsFor(chunks, first!)).toEqual([JSON.stringify({ error: 'the person closed the dialog' })]);
    expect(resultsFor(chunks, second!)).toEqual([JSON.stringify({ answer: 'second answer' })]);
    expect(await toolMessage(run.runId, second!)).toMatchObject({ content: JSON.stringify({ answer: 'second answer' }) });
    expectSettled(client);
    client.dispose();
  });
});
