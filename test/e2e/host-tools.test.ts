import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../scripts/local-stack.ts';
import { agUiProblems } from '../support/ag-ui-check.ts';
import { startWebhookDouble, type WebhookDouble } from '../support/webhook-double.ts';
import { hostToolAnswer, startProviderDouble, type ProviderDouble } from '../../container/test/doubles/provider-double.ts';
import { postRun, startStack, storedChunks, waitSettled } from './stack.ts';

/**
 * SPEC "Workspace and host tools", every harness end to end: the local stack
 * (`npm start`'s Worker and runner) with the Claude Code and Codex doubles on
 * PATH and the provider double behind ANTHROPIC_BASE_URL / OPENAI_BASE_URL.
 * The run object calls the app's endpoint (test/support/webhook-double.ts)
 * signed, and the result goes back to the harness, which answers with it:
 * - the demo calls `harnessOptions.toolCalls` in order;
 * - chat's model calls the tool through `chat()` server tools;
 * - a CLI reaches it through the MCP bridge configuration its adapter
 *   generates (the double connects with `@modelcontextprotocol/sdk`'s client).
 */
const DOUBLES = fileURLToPath(new URL('../../container/test/doubles/bin', import.meta.url));
const SECRET = 'e2e-cli-host-tools-webhook-secret-0123456789';

let hooks: WebhookDouble;
let provider: ProviderDouble;
let stack: LocalStack;
let workspaces: string;
beforeAll(async () => {
  hooks = await startWebhookDouble();
  provider = await startProviderDouble();
  workspaces = mkdtempSync(join(tmpdir(), 'relay-e2e-cli-host-tools-'));
  stack = await startStack({
    vars: { TOOL_WEBHOOK_ORIGINS: hooks.url, TOOL_WEBHOOK_SECRET: SECRET },
    runnerEnv: {
      PATH: `${DOUBLES}${delimiter}${process.env.PATH ?? ''}`,
      RUNNER_WORKSPACE_ROOT: workspaces,
      ANTHROPIC_API_KEY: 'sk-ant-api03-dummy-e2e-key-0123456789',
      OPENAI_API_KEY: 'sk-proj-dummy-e2e-key-0123456789',
      ANTHROPIC_BASE_URL: provider.url,
      OPENAI_BASE_URL: `${provider.url}/v1`,
    },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await hooks?.close();
  await provider?.close();
  if (workspaces) rmSync(workspaces, { recursive: true, force: true });
});

type Chunk = Record<string, unknown> & { type: string };


const ECHO = {
  name: 'echo',
  description: 'Echoes its input.',
  inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  execute: { type: 'webhook', url: '' },
};

/** The id each CLI gives a call: the model's `toolu_…`; Codex's per-process item id behind the run id. */
const ID_PATTERN = { 'claude-code': () => /^toolu_[0-9a-f]{24}$/, codex: (runId: string) => new RegExp(`^${runId}-item_\\d+$`) } as const;

describe.each(['claude-code', 'codex'] as const)('%s calls a webhook tool through its MCP bridge', (harness) => {
  it('one signed request keyed by the call id, every TOOL_CALL_* frame, the output back to the CLI, and the call replayable in the transcript', async () => {
    const run = await postRun(stack.url, {
      prompt: `say it back [scenario:host-tool echo {"text":"hello from ${harness}"}]`,
      harness,
      tools: [{ ...ECHO, execute: { type: 'webhook', url: `${hooks.url}/hooks/echo` } }],
    });
    const record = await waitSettled(stack.url, run.runId);
    expect(record).toMatchObject({ status: 'completed' });
    const chunks = await storedChunks(stack.url, run.runId);
    expect(await agUiProblems(chunks)).toEqual([]);

    const starts = chunks.filter((chunk) => chunk.type === 'TOOL_CALL_START');
    expect(starts.map((chunk) => chunk.toolCallName)).toEqual(['echo']);
    const toolCallId = String(starts[0]!.toolCallId);
    expect(toolCallId).toMatch(ID_PATTERN[harness](run.runId));
    for (const type of ['TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT']) {
      expect(chunks.filter((chunk) => chunk.type === type).map((chunk) => chunk.toolCallId)).toEqual([toolCallId]);
    }

    const calls = hooks.calls.filter((call) => (JSON.parse(call.body) as { runId: string }).runId === run.runId);
    expect(calls).toHaveLength(1);
    const [call] = calls;
    expect(call!.idempotencyKey).toBe(toolCallId);
    expect(JSON.parse(call!.body)).toEqual({ runId: run.runId, threadId: run.threadId, toolCallId, name: 'echo', input: { text: `hello from ${harness}` } });
    const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(call!.signature ?? '') ?? [];
    expect(v1).toBe(createHmac('sha256', SECRET).update(`${t}.${call!.body}`).digest('hex'));

    const output = JSON.stringify({ echo: { text: `hello from ${harness}` } });
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT')).toMatchObject({ content: output });
    const text = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT').map((chunk) => chunk.delta).join('');
    expect(text).toContain(`echo answered: ${output}`);

    // A host call ran through the relay, not in the sandbox: unmarked, so the next turn replays it.
    // The thread's transcript is folded from the stored run, possibly just after the record settled.
    let messages: { role: string; toolCallId?: string; content?: unknown; metadata?: unknown; toolCalls?: { id: string; metadata?: unknown }[] }[] = [];
    for (let i = 0; i < 200 && !messages.some((message) => message.toolCallId === toolCallId); i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 25));
      ({ messages } = (await (await fetch(`${stack.url}/threads/${run.threadId}/messages`)).json()) as { messages: typeof messages });
    }
    const replayed = messages.flatMap((message) => message.toolCalls ?? []).find((candidate) => candidate.id === toolCallId);
    expect(replayed).toBeDefined();
    expect(replayed!.metadata).toBeUndefined();
    expect(messages.find((message) => message.role === 'tool' && message.toolCallId === toolCallId)).toMatchObject({ content: output });
  });
});

function callsOf(runId: string) {
  return hooks.calls.filter((call) => (JSON.parse(call.body) as { runId: string }).runId === runId);
}

function verified(call: { signature: string | null; body: string }): boolean {
  const [, t, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(call.signature ?? '') ?? [];
  return v1 === createHmac('sha256', SECRET).update(`${t}.${call.body}`).digest('hex');
}

describe('the demo harness calls two webhook tools', () => {
  it('completes with one signed request per call and the outputs as the calls\' results', async () => {
    const run = await postRun(stack.url, {
      prompt: 'use both',
      tools: [
        { ...ECHO, execute: { type: 'webhook', url: `${hooks.url}/hooks/echo` } },
        { name: 'add', description: 'Adds.', inputSchema: { type: 'object' }, execute: { type: 'webhook', url: `${hooks.url}/hooks/add` } },
      ],
      harnessOptions: { chunks: 3, delayMs: 0, toolCalls: [{ name: 'echo', input: { text: 'demo' } }, { name: 'add', input: { a: 20, b: 22 } }] },
    });
    expect(await waitSettled(stack.url, run.runId)).toMatchObject({ status: 'completed' });
    const chunks = await storedChunks(stack.url, run.runId);
    expect(await agUiProblems(chunks)).toEqual([]);
    const ids = chunks.filter((chunk) => chunk.type === 'TOOL_CALL_START' && ['echo', 'add'].includes(String(chunk.toolCallName))).map((chunk) => String(chunk.toolCallId));
    expect(ids).toHaveLength(2);
    const calls = callsOf(run.runId);
    expect(calls.map((call) => call.idempotencyKey)).toEqual(ids);
    expect(calls.every(verified)).toBe(true);
    const results = ids.map((id) => chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT' && chunk.toolCallId === id)?.content);
    expect(results).toEqual([JSON.stringify({ echo: { text: 'demo' } }), JSON.stringify({ sum: 42 })]);
  });
});

describe.each([
  ['anthropic', 'claude-sonnet-4-6'],
  ['openai', 'gpt-5.1'],
] as const)('the chat harness (%s) calls a webhook tool', (_provider, model) => {
  it('the model calls the tool, the webhook runs once, signed, and the model answers with its result', async () => {
    const run = await postRun(stack.url, {
      prompt: 'say it back [scenario:host-tool echo {"text":"hello from chat"}]',
      harness: 'chat',
      model,
      tools: [{ ...ECHO, execute: { type: 'webhook', url: `${hooks.url}/hooks/echo` } }],
    });
    expect(await waitSettled(stack.url, run.runId)).toMatchObject({ status: 'completed' });
    const chunks = await storedChunks(stack.url, run.runId);
    expect(await agUiProblems(chunks)).toEqual([]);
    const start = chunks.find((chunk) => chunk.type === 'TOOL_CALL_START');
    expect(start).toMatchObject({ toolCallName: 'echo' });
    const calls = callsOf(run.runId);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.idempotencyKey).toBe(start!.toolCallId);
    expect(verified(calls[0]!)).toBe(true);
    const output = JSON.stringify({ echo: { text: 'hello from chat' } });
    expect(chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT')).toMatchObject({ toolCallId: start!.toolCallId, content: output });
    const text = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT').map((chunk) => chunk.delta).join('');
    expect(text).toContain(hostToolAnswer([output]));
  });
});
