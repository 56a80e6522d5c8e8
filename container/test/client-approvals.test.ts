import { PassThrough } from 'node:stream';
import type { ToolBridgeProvisionOptions, ToolBridgeProvisioner } from '@tanstack/ai-sandbox';
import { describe, expect, it } from 'vitest';
import { APPROVAL_TOOL, HOST_TOOL_CALL_EVENT, toolDescriptors } from '../../src/protocol/index.ts';
import { ChunkWriter } from '../src/chunk-writer.ts';
import { ClientApprovals, decisionOf, parsePermissionRequest } from '../src/harnesses/client-approvals.ts';
import { HostTools } from '../src/host-tools.ts';
import { createRedactor } from '../src/redact.ts';
import type { Chunk } from './helpers.ts';

describe('decisionOf: only a plain allow runs the tool', () => {
  it.each([
    [{ output: { behavior: 'allow' } }, { behavior: 'allow' }, true],
    [{ output: { behavior: 'allow', message: 'fine' } }, { behavior: 'allow' }, true],
    [{ output: { behavior: 'deny', message: 'Not now.' } }, { behavior: 'deny', message: 'Not now.' }, true],
    [{ output: { behavior: 'deny' } }, { behavior: 'deny', message: 'The person approving this run denied Bash.' }, true],
    [{ output: { behavior: 'allow', updatedInput: { command: 'rm -rf /' } } }, { behavior: 'deny', message: "Bash was not run: the answer was not {behavior: 'allow' | 'deny', message?: string} (unknown field updatedInput)." }, false],
    [{ output: { behavior: 'ALLOW' } }, { behavior: 'deny', message: `Bash was not run: the answer was not {behavior: 'allow' | 'deny', message?: string} (behavior is "ALLOW").` }, false],
    [{ output: { behavior: 'allow', message: 7 } }, { behavior: 'deny', message: "Bash was not run: the answer was not {behavior: 'allow' | 'deny', message?: string} (message is not a string)." }, false],
    [{ output: 'allow' }, { behavior: 'deny', message: "Bash was not run: the answer was not {behavior: 'allow' | 'deny', message?: string}." }, false],
    [{ output: null }, { behavior: 'deny', message: "Bash was not run: the answer was not {behavior: 'allow' | 'deny', message?: string}." }, false],
    [{ error: 'timeout: no answer' }, { behavior: 'deny', message: 'Bash was not run: the approval was not given (timeout: no answer).' }, false],
  ])('%j → %j', (outcome, decision, answered) => {
    expect(decisionOf(outcome, 'Bash')).toEqual({ decision, answered });
  });

  it('keeps a long message to the tool error bound', () => {
    const { decision } = decisionOf({ output: { behavior: 'deny', message: 'x'.repeat(10_000) } }, 'Bash');
    expect(decision.message!.length).toBe(4_097);
  });
});

describe('parsePermissionRequest', () => {
  it("reads Claude Code's {tool_name, input, tool_use_id} and tolerates a missing part", () => {
    expect(parsePermissionRequest({ tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: 'toolu_1' })).toEqual({ toolName: 'Bash', input: { command: 'ls' }, toolUseId: 'toolu_1' });
    expect(parsePermissionRequest({})).toEqual({ toolName: 'tool', input: {}, toolUseId: undefined });
    expect(parsePermissionRequest('nonsense')).toEqual({ toolName: 'tool', input: {}, toolUseId: undefined });
  });
});

function approvalsOver(answers: Map<string, unknown>) {
  const out = new PassThrough();
  const writer = new ChunkWriter(out, createRedactor({}));
  const tools = new HostTools([], writer, { unadvertised: toolDescriptors([APPROVAL_TOOL]) });
  const chunks: Chunk[] = [];
  let buffered = '';
  out.setEncoding('utf8');
  out.on('data', (data: string) => {
    buffered += data;
    for (let at = buffered.indexOf('\n'); at !== -1; at = buffered.indexOf('\n')) {
      const chunk = JSON.parse(buffered.slice(0, at)) as Chunk;
      buffered = buffered.slice(at + 1);
      chunks.push(chunk);
      if (chunk.type === 'CUSTOM' && chunk.name === HOST_TOOL_CALL_EVENT) {
        const { toolCallId } = chunk.value as { toolCallId: string };
        setImmediate(() => tools.resolve({ toolCallId, outcome: { output: answers.get(toolCallId) } }));
      }
    }
  });
  // A zero wait bound: these prompts come with no stream to wait for.
  return { approvals: new ClientApprovals(tools, writer, 0), chunks };
}

describe('ClientApprovals', () => {
  it('gives a second prompt for the same call an id of its own', async () => {
    const { approvals, chunks } = approvalsOver(new Map([['toolu_1-approve', { behavior: 'allow' }], ['toolu_1-approve-2', { behavior: 'deny', message: 'Once is enough.' }]]));
    const request = { tool_name: 'Bash', input: { command: 'ls' }, tool_use_id: 'toolu_1' };
    expect(await approvals.decide(request)).toEqual({ behavior: 'allow' });
    expect(await approvals.decide(request)).toEqual({ behavior: 'deny', message: 'Once is enough.' });
    expect(chunks.filter((chunk) => chunk.type === 'TOOL_CALL_START').map((chunk) => chunk.toolCallId)).toEqual(['toolu_1-approve', 'toolu_1-approve-2']);
  });

  it("replaces the adapter's permission resolver and leaves a bridge without one as it was", async () => {
    const { approvals } = approvalsOver(new Map());
    const seen: ToolBridgeProvisionOptions[] = [];
    const base: ToolBridgeProvisioner = {
      provision: async (_tools, options) => {
        seen.push(options);
        return { name: 'tanstack', url: 'http://127.0.0.1:1/mcp', token: 't', close: async () => {} };
      },
    };
    const adapterResolver = () => ({ behavior: 'deny' as const, message: 'Awaiting client approval. Approve in the UI and re-run to continue.' });
    await approvals.provisioner(base).provision([], { provider: 'local-process', permission: { toolName: 'approval_prompt', resolve: adapterResolver } });
    await approvals.provisioner(base).provision([], { provider: 'local-process' });
    expect(seen[0]!.permission?.toolName).toBe('approval_prompt');
    expect(seen[0]!.permission?.resolve).not.toBe(adapterResolver);
    expect(seen[1]!.permission).toBeUndefined();
  });
});
