import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_TOOL_CALL_EVENT } from '../../src/protocol/index.ts';
import { agUiProblems } from '../../test/support/ag-ui-check.ts';
import { expectDeltaOnly, runHarness, textOf } from './doubles/harness-run.ts';
import { hostToolAnswer, startProviderDouble, type ProviderDouble } from './doubles/provider-double.ts';
import { cleanEnv, json, runBody, runId, startTestRunner, stream, type Chunk, type TestRunner } from './helpers.ts';

/**
 * The chat harness calling the run's own tools: `chat()` gets them as server
 * tools, the model (the provider double, through the real adapters) calls
 * one, the relay's answer comes back through the runner's tool-results route,
 * and the model's next turn answers with it.
 */
let provider: ProviderDouble;
let runner: TestRunner;
beforeAll(async () => {
  provider = await startProviderDouble();
  runner = await startTestRunner({
    env: cleanEnv({
      ANTHROPIC_API_KEY: 'sk-ant-api03-dummy-provider-key-0123456789',
      ANTHROPIC_BASE_URL: provider.url,
      OPENAI_API_KEY: 'sk-proj-dummy-provider-key-0123456789',
      OPENAI_BASE_URL: `${provider.url}/v1`,
    }),
  });
});
afterAll(async () => {
  await runner?.close();
  await provider?.close();
});

const TOOLS = [{ name: 'lookup', description: 'Looks a word up.', inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } }];
const PROMPT = 'what does relay mean [scenario:host-tool lookup {"word":"relay"}]';

/** Starts a chat run with the host tools, reads up to its tool request, answers it with `result`, reads the rest. */
async function answeredRun(model: string, result: Record<string, unknown>) {
  const id = runId('chat_host');
  const answer = await stream(`${runner.url}/run`, 'POST', runBody(id, { harness: 'chat', model, tools: TOOLS, messages: [{ role: 'user', content: PROMPT }] }));
  const chunks: Chunk[] = [];
  let request: Chunk | undefined;
  while (request === undefined) {
    const [chunk] = await answer.chunks(1);
    chunks.push(chunk!);
    if (chunk!.type === 'CUSTOM' && chunk!.name === HOST_TOOL_CALL_EVENT) request = chunk;
  }
  const { toolCallId } = request.value as { toolCallId: string };
  const posted = await json(`${runner.url}/runs/${id}/tool-results`, 'POST', { toolCallId, ...result });
  expect(posted).toMatchObject({ status: 200, body: { delivered: true } });
  const rest = await answer.rest();
  expect(rest.end).toBe('end');
  return { id, request, chunks: [...chunks, ...rest.chunks] };
}

describe.each([
  ['anthropic', 'claude-sonnet-4-6', 'toolu_double_host_0'],
  // @tanstack/ai-openai names a call by its output item's id, not its call_id.
  ['openai', 'gpt-5.1', 'fc_double_host_0'],
] as const)('chat (%s) with host tools', (_provider, model, callId) => {
  it('advertises the tools, asks the relay under the model call id, and the model answers with the result', async () => {
    const before = provider.requests.length;
    const { id, request, chunks } = await answeredRun(model, { output: { definition: 'passes things on' } });
    expect(await agUiProblems(chunks)).toEqual([]);
    expectDeltaOnly(chunks);
    expect(request.value).toEqual({ toolCallId: callId, toolName: 'lookup', input: { word: 'relay' } });

    const call = chunks.filter((chunk) => chunk.toolCallId === callId || chunk === request).map((chunk) => chunk.type);
    expect(call).toEqual(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'CUSTOM', 'TOOL_CALL_RESULT']);
    const result = chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT');
    expect(result).toMatchObject({ toolCallId: callId, content: '{"definition":"passes things on"}' });
    expect(textOf(chunks)).toContain(hostToolAnswer(['{"definition":"passes things on"}']));
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id });
    // One request for the call, one carrying its result.
    expect(provider.requests.length - before).toBe(2);
  });

  it('gives the model an error outcome as a failed call, and the run goes on', async () => {
    const { chunks } = await answeredRun(model, { error: 'the dictionary is closed' });
    expect(await agUiProblems(chunks)).toEqual([]);
    const result = chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT');
    expect(result).toMatchObject({ toolCallId: callId, content: '{"error":"the dictionary is closed"}', metadata: { tanstack: { state: 'output-error' } } });
    expect(textOf(chunks)).toContain(hostToolAnswer(['{"error":"the dictionary is closed"}']));
    expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
  });
});

describe('chat without host tools', () => {
  it('offers the model no tool, so the double asks for none', async () => {
    const { chunks } = await runHarness(runner, 'chat', PROMPT, { model: 'claude-sonnet-4-6' });
    expect(chunks.some((chunk) => chunk.type === 'TOOL_CALL_START' || chunk.type === 'CUSTOM')).toBe(false);
    expect(textOf(chunks)).toBe('No tool named lookup was offered.');
  });
});
