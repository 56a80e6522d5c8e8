import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_HOST_TOOL_CALL_EVENTS, DEMO_OVERHEAD_EVENTS, HOST_TOOL_CALL_EVENT, demoEventCount, parseDemoOptions, type ToolOutcome } from '../../src/protocol/index.ts';
import { agUiProblems } from '../../test/support/ag-ui-check.ts';
import { demoResultContent, demoScript, type DemoStep } from '../src/harnesses/demo-script.ts';
import { eventually, json, runBody, runId, startTestRunner, stream, withoutTimestamps, type Chunk, type NdjsonStream, type TestRunner } from './helpers.ts';

/**
 * Host tools on the runner side (SPEC "Workspace and host tools"): a harness
 * asks with a `tool-input-available` chunk and waits; the relay answers with
 * `POST /runs/:runId/tool-results`, which the runner passes to the harness
 * process on its stdin, once per call.
 */
let runner: TestRunner;
beforeAll(async () => {
  runner = await startTestRunner();
});
afterAll(() => runner.close());

const TOOLS = [
  { name: 'lookup', description: 'Looks a word up.', inputSchema: { type: 'object', properties: { word: { type: 'string' } }, required: ['word'] } },
  { name: 'weather', description: 'The weather in a city.', inputSchema: { type: 'object', properties: { city: { type: 'string' } } } },
];
const CALLS = [
  { name: 'lookup', input: { word: 'relay' } },
  { name: 'weather', input: { city: 'Lisbon' } },
];

function errorOf(body: unknown): { code: string; message: string } {
  return (body as { error: { code: string; message: string } }).error;
}

/** Starts a demo run that calls `calls` in order; its stream is read by the test. */
async function startDemo(calls = CALLS, label = 'host'): Promise<{ id: string; answer: NdjsonStream }> {
  const id = runId(label);
  const answer = await stream(`${runner.url}/run`, 'POST', runBody(id, { tools: TOOLS, harnessOptions: { chunks: 3, delayMs: 0, toolCalls: calls } }));
  return { id, answer };
}

/** Reads chunks up to and including the next host tool request. */
async function untilRequest(answer: NdjsonStream): Promise<{ read: Chunk[]; request: { toolCallId: string; toolName: string; input: unknown } }> {
  const read: Chunk[] = [];
  for (;;) {
    const [chunk] = await answer.chunks(1);
    read.push(chunk!);
    if (chunk!.type === 'CUSTOM' && chunk!.name === HOST_TOOL_CALL_EVENT) return { read, request: chunk!.value as { toolCallId: string; toolName: string; input: unknown } };
  }
}

function postResult(id: string, body: unknown, headers?: Record<string, string | null>) {
  return json(`${runner.url}/runs/${id}/tool-results`, 'POST', body, headers);
}

describe('POST /runs/:runId/tool-results', () => {
  it('needs the runner token', async () => {
    const { id, answer } = await startDemo([CALLS[0]!], 'auth');
    const { request } = await untilRequest(answer);
    for (const authorization of [null, 'Bearer not-the-runner-token-at-all']) {
      const refused = await postResult(id, { toolCallId: request.toolCallId, output: 'forged' }, { authorization });
      expect(refused.status).toBe(401);
      expect(errorOf(refused.body).code).toBe('unauthorized');
    }
    // The forged answers reached nothing: the call still takes the real one.
    expect((await postResult(id, { toolCallId: request.toolCallId, output: 'real' })).body).toEqual({ delivered: true });
    const { chunks } = await answer.rest();
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT' && chunk.toolCallId === request.toolCallId)?.content).toBe('"real"');
  });

  it('answers 404 run_not_found for a run it does not know', async () => {
    const answer = await postResult('never_started_here', { toolCallId: 'call_1', output: 1 });
    expect(answer.status).toBe(404);
    expect(errorOf(answer.body).code).toBe('run_not_found');
  });

  it.each([
    ['no toolCallId', { output: 1 }, 'toolCallId'],
    ['a bad toolCallId', { toolCallId: 'has spaces', output: 1 }, 'toolCallId'],
    ['both output and error', { toolCallId: 'call_1', output: 1, error: 'no' }, 'exactly one of output or error'],
    ['neither output nor error', { toolCallId: 'call_1' }, 'exactly one of output or error'],
    ['an unknown field', { toolCallId: 'call_1', output: 1, extra: true }, 'body.extra'],
  ])('answers 400 invalid_body for %s', async (_label, body, mention) => {
    const { id, answer } = await startDemo([CALLS[0]!], 'badbody');
    const { request } = await untilRequest(answer);
    const refused = await postResult(id, body);
    expect(refused.status).toBe(400);
    expect(errorOf(refused.body).code).toBe('invalid_body');
    expect(errorOf(refused.body).message).toContain(mention);
    await postResult(id, { toolCallId: request.toolCallId, output: null });
    expect((await answer.rest()).chunks.at(-1)?.type).toBe('RUN_FINISHED');
  });

  it('answers 413 for a body over 2 MiB', async () => {
    const { id, answer } = await startDemo([CALLS[0]!], 'big');
    const { request } = await untilRequest(answer);
    const refused = await postResult(id, { toolCallId: request.toolCallId, output: 'x'.repeat(2 * 1024 * 1024) });
    expect(refused.status).toBe(413);
    expect(errorOf(refused.body).code).toBe('payload_too_large');
    await postResult(id, { toolCallId: request.toolCallId, output: 'small' });
    await answer.rest();
  });

  it('lets the first answer win and passes it to the harness once', async () => {
    const { id, answer } = await startDemo();
    const first = await untilRequest(answer);
    expect((await postResult(id, { toolCallId: first.request.toolCallId, output: { first: true } })).body).toEqual({ delivered: true });
    const again = await postResult(id, { toolCallId: first.request.toolCallId, output: { first: false } });
    expect(again).toMatchObject({ status: 200, body: { delivered: false } });
    const second = await untilRequest(answer);
    await postResult(id, { toolCallId: second.request.toolCallId, output: 'sunny' });
    const chunks = [...second.read, ...(await answer.rest()).chunks];
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT' && chunk.toolCallId === first.request.toolCallId)?.content).toBe('{"first":true}');
    // The harness logs each result line it reads, in stdin order: the second call's comes after any repeat of the first's.
    await eventually(() => runner.logs.some((line) => line.includes(`tool result for ${second.request.toolCallId}`)), 'the second result in the harness log');
    expect(runner.logs.filter((line) => line.includes(`tool result for ${first.request.toolCallId} `))).toHaveLength(1);
  });

  it('answers 409 run_ended once the harness is done, and delivered: false for a call it had answered', async () => {
    const { id, answer } = await startDemo([CALLS[0]!], 'ended');
    const { request } = await untilRequest(answer);
    await postResult(id, { toolCallId: request.toolCallId, output: 'done' });
    expect((await answer.rest()).end).toBe('end');
    const late = await postResult(id, { toolCallId: `${id}-host-9`, output: 'late' });
    expect(late.status).toBe(409);
    expect(errorOf(late.body).code).toBe('run_ended');
    expect((await postResult(id, { toolCallId: request.toolCallId, output: 'done' })).body).toEqual({ delivered: false });
  });

  it('answers 409 run_ended for a cancelled run', async () => {
    const { id, answer } = await startDemo([CALLS[0]!], 'cancelled');
    const { request } = await untilRequest(answer);
    await json(`${runner.url}/runs/${id}/cancel`, 'POST');
    await answer.rest();
    const late = await postResult(id, { toolCallId: request.toolCallId, output: 'too late' });
    expect(late.status).toBe(409);
    expect(errorOf(late.body).code).toBe('run_ended');
  });
});

describe('the demo harness with toolCalls', () => {
  it('calls each tool in order, waits for its answer and writes its result', async () => {
    const { id, answer } = await startDemo();
    const first = await untilRequest(answer);
    expect(first.request).toEqual({ toolCallId: `${id}-host-0`, toolName: 'lookup', input: { word: 'relay' } });
    // Nothing after the request until it is answered: the request is the last chunk read.
    expect(first.read.at(-1)?.type).toBe('CUSTOM');
    await postResult(id, { toolCallId: first.request.toolCallId, output: { definition: 'passes things on' } });
    const second = await untilRequest(answer);
    expect(second.request).toEqual({ toolCallId: `${id}-host-1`, toolName: 'weather', input: { city: 'Lisbon' } });
    await postResult(id, { toolCallId: second.request.toolCallId, output: 'sunny' });
    const rest = await answer.rest();
    const chunks = [...first.read, ...second.read, ...rest.chunks];
    expect(rest.end).toBe('end');
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(chunks).toHaveLength(demoEventCount(parseDemoOptions({ chunks: 3, toolCalls: CALLS })));

    const host = chunks.filter((chunk) => chunk.type === 'CUSTOM' || String(chunk.toolCallId).startsWith(`${id}-host-`));
    expect(host.map((chunk) => chunk.type)).toEqual(Array(2).fill(['TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'CUSTOM', 'TOOL_CALL_RESULT']).flat());
    expect(host[0]).toMatchObject({ toolCallId: `${id}-host-0`, toolCallName: 'lookup' });
    expect(JSON.parse(host[1]!.delta as string)).toEqual({ word: 'relay' });
    expect(host[2]).toMatchObject({ toolCallId: `${id}-host-0`, metadata: { tanstack: { toolCallName: 'lookup', input: { word: 'relay' } } } });
    expect(host[4]).toMatchObject({ type: 'TOOL_CALL_RESULT', toolCallId: `${id}-host-0`, role: 'tool', content: '{"definition":"passes things on"}' });
    expect(host[9]).toMatchObject({ type: 'TOOL_CALL_RESULT', toolCallId: `${id}-host-1`, content: '"sunny"' });
    // After the host calls, the run ends as every demo run does.
    expect(chunks.slice(-4).map((chunk) => chunk.type)).toEqual(['TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
  });

  it('gives an error outcome to the call as a failed result and goes on', async () => {
    const { id, answer } = await startDemo();
    const first = await untilRequest(answer);
    await postResult(id, { toolCallId: first.request.toolCallId, error: 'the dictionary is closed' });
    const second = await untilRequest(answer);
    await postResult(id, { toolCallId: second.request.toolCallId, output: 'rain' });
    const rest = await answer.rest();
    const chunks = [...first.read, ...second.read, ...rest.chunks];
    expect(await agUiProblems(chunks)).toEqual([]);
    const results = chunks.filter((chunk) => chunk.type === 'TOOL_CALL_RESULT' && String(chunk.toolCallId).startsWith(`${id}-host-`));
    expect(results[0]).toMatchObject({ content: '{"error":"the dictionary is closed"}', metadata: { tanstack: { state: 'output-error' } } });
    expect(results[1]).toMatchObject({ content: '"rain"' });
    expect(results[1]!.metadata).toBeUndefined();
    expect(chunks.at(-1)).toMatchObject({ type: 'RUN_FINISHED', runId: id });
  });

  it('gives a call of a tool the run does not have an error result, without asking the relay', async () => {
    const id = runId('notools');
    const answer = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 1, delayMs: 0, toolCalls: [CALLS[0]] } }));
    const { chunks } = await answer.rest();
    expect(await agUiProblems(chunks)).toEqual([]);
    expect(chunks.some((chunk) => chunk.type === 'CUSTOM')).toBe(false);
    expect(chunks.find((chunk) => chunk.toolCallId === `${id}-host-0` && chunk.type === 'TOOL_CALL_RESULT')?.content).toBe(JSON.stringify({ error: "lookup is not one of this run's tools (it has none)" }));
    expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
  });
});

describe('the demo script with toolCalls (pure)', () => {
  /** Drives the script as the harness does, answering each call from `outcomes`. */
  function drive(outcomes: ToolOutcome[]): Chunk[] {
    const script = demoScript({ runId: 'r1', threadId: 't1', messages: [{ role: 'user', content: 'hi' }] }, parseDemoOptions({ chunks: 2, toolCalls: CALLS }), () => 0);
    const chunks: Chunk[] = [];
    let answer: ToolOutcome | undefined;
    for (let next = script.next(); next.done !== true; next = script.next(answer)) {
      const step: DemoStep = next.value;
      answer = step.kind === 'host-tool' ? outcomes.shift() : undefined;
      if (step.kind === 'chunk') chunks.push(step.chunk as Chunk);
    }
    return withoutTimestamps(chunks);
  }

  it('writes the outcome it is given as the call result, and the budget counts every chunk', () => {
    const chunks = drive([{ output: [1, 2] }, { error: 'nope' }]);
    const results = chunks.filter((chunk) => chunk.type === 'TOOL_CALL_RESULT').map((chunk) => chunk.content);
    expect(results.slice(1)).toEqual([demoResultContent({ output: [1, 2] }), demoResultContent({ error: 'nope' })]);
    // The script's chunks and the request HostTools writes for each call.
    expect(chunks.length + CALLS.length).toBe(demoEventCount(parseDemoOptions({ chunks: 2, toolCalls: CALLS })));
    expect(demoEventCount(parseDemoOptions({ chunks: 2, toolCalls: CALLS }))).toBe(2 + DEMO_OVERHEAD_EVENTS + 2 * DEMO_HOST_TOOL_CALL_EVENTS);
  });
});
