import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunView } from '../../src/protocol/index.ts';
import type { LocalStack } from '../../scripts/local-stack.ts';
import { agUiProblems } from '../support/ag-ui-check.ts';
import { getRun, postRun, startStack, storedChunks, waitSettled } from './stack.ts';

/**
 * SPEC "Interactive runs", approvals end to end: the local stack (`npm
 * start`'s Worker and runner) with the Claude Code double on PATH. A
 * claude-code run with `approvals: 'client'` runs the CLI's own Bash twice;
 * each of the CLI's permission prompts is an `approve` call on the record's
 * `pendingToolCalls`, answered with `POST /runs/:runId/tool-results` as a
 * person's tab would, and only the allowed command ran in the workspace.
 */
const DOUBLES = fileURLToPath(new URL('../../container/test/doubles/bin', import.meta.url));

let stack: LocalStack;
let workspaces: string;
beforeAll(async () => {
  workspaces = mkdtempSync(join(tmpdir(), 'relay-e2e-approvals-'));
  stack = await startStack({
    runnerEnv: { PATH: `${DOUBLES}${delimiter}${process.env.PATH ?? ''}`, RUNNER_WORKSPACE_ROOT: workspaces, ANTHROPIC_API_KEY: 'sk-ant-api03-dummy-e2e-key-0123456789' },
  });
}, 120_000);
afterAll(async () => {
  await stack?.close();
  if (workspaces) rmSync(workspaces, { recursive: true, force: true });
});

type Chunk = Record<string, unknown> & { type: string };
type Pending = NonNullable<RunView['pendingToolCalls']>[number];


/** The record's next pending `approve` call other than those answered already. */
async function nextApproval(runId: string, answered: ReadonlySet<string>): Promise<Pending> {
  for (let i = 0; i < 1_500; i++) {
    const record = await getRun(stack.url, runId);
    const pending = record.pendingToolCalls?.find((call) => call.name === 'approve' && !answered.has(call.toolCallId));
    if (pending !== undefined) return pending;
    if (record.status !== 'running') throw new Error(`run ${runId} ended ${record.status} with no approval pending`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`run ${runId} never asked for an approval`);
}

/** Every file the thread workspaces under RUNNER_WORKSPACE_ROOT hold with this name. */
const filesNamed = (name: string) => readdirSync(workspaces).filter((dir) => existsSync(join(workspaces, dir, name)));

const bash = (file: string) => ({ command: `cp /dev/null ${file}`, description: `Create ${file}` });

describe('claude-code approvals through the relay', () => {
  it('lists each permission prompt as a pending approve call; allow runs that command, deny does not, and the run completes', async () => {
    const prompt = `make two files [scenario:cli-tool Bash ${JSON.stringify(bash('approved.txt'))}] [scenario:cli-tool Bash ${JSON.stringify(bash('denied.txt'))}]`;
    const run = await postRun(stack.url, { harness: 'claude-code', approvals: 'client', prompt });
    const answered = new Set<string>();
    const answer = async (toolCallId: string, output: unknown) => {
      answered.add(toolCallId);
      const res = await fetch(`${stack.url}/runs/${run.runId}/tool-results`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ toolCallId, output }) });
      return { status: res.status, body: (await res.json()) as RunView };
    };

    const first = await nextApproval(run.runId, answered);
    expect(first.input).toEqual({ tool: 'Bash', input: bash('approved.txt') });
    // The CLI waits on its prompt: nothing ran, and the run is running, not paused.
    expect(filesNamed('approved.txt')).toEqual([]);
    const allowed = await answer(first.toolCallId, { behavior: 'allow' });
    expect(allowed.status).toBe(200);
    expect(allowed.body.status).toBe('running');

    const second = await nextApproval(run.runId, answered);
    expect(second.input).toEqual({ tool: 'Bash', input: bash('denied.txt') });
    expect(filesNamed('approved.txt')).toHaveLength(1);
    expect((await answer(second.toolCallId, { behavior: 'deny', message: 'Not this one.' })).status).toBe(200);

    const record = await waitSettled(stack.url, run.runId);
    expect(record).toMatchObject({ status: 'completed' });
    expect(record.pendingToolCalls ?? []).toEqual([]);
    expect(filesNamed('approved.txt')).toHaveLength(1);
    expect(filesNamed('denied.txt')).toEqual([]);

    const chunks = await storedChunks(stack.url, run.runId);
    expect(await agUiProblems(chunks)).toEqual([]);
    // The approvals are tool calls in the log, each with the decision the CLI got as its result.
    const approvals = chunks.filter((chunk) => chunk.type === 'TOOL_CALL_START' && chunk.toolCallName === 'approve').map((chunk) => chunk.toolCallId);
    expect(approvals).toEqual([first.toolCallId, second.toolCallId]);
    const resultOf = (toolCallId: unknown) => chunks.find((chunk) => chunk.type === 'TOOL_CALL_RESULT' && chunk.toolCallId === toolCallId);
    expect(JSON.parse(String(resultOf(first.toolCallId)?.content))).toEqual({ behavior: 'allow' });
    expect(JSON.parse(String(resultOf(second.toolCallId)?.content))).toEqual({ behavior: 'deny', message: 'Not this one.' });
    const text = chunks.filter((chunk) => chunk.type === 'TEXT_MESSAGE_CONTENT').map((chunk) => chunk.delta).join('');
    expect(text).toBe('I will call Bash.Bash answered: (Bash completed with no output) Bash denied: Not this one.');

    // The thread's transcript keeps them too, folded from the stored run (possibly just after the record settled).
    type Message = { role: string; toolCallId?: string; content?: unknown; toolCalls?: { id: string; function: { name: string } }[] };
    let messages: Message[] = [];
    for (let i = 0; i < 200 && !messages.some((message) => message.toolCallId === second.toolCallId); i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 25));
      ({ messages } = (await (await fetch(`${stack.url}/threads/${run.threadId}/messages`)).json()) as { messages: Message[] });
    }
    const calls = messages.flatMap((message) => message.toolCalls ?? []).filter((call) => call.function.name === 'approve');
    expect(calls.map((call) => call.id)).toEqual([first.toolCallId, second.toolCallId]);
    expect(messages.find((message) => message.role === 'tool' && message.toolCallId === first.toolCallId)).toMatchObject({ content: '{"behavior":"allow"}' });
  });
});
