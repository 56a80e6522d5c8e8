import { describe, expect, it } from 'vitest';
import { HOST_TOOL_CALL_EVENT, ProtocolError, ToolNotAllowedError, hostToolCallOf, parseCreateRunBody, parseToolResult, parseTools, toolDescriptors, type ToolPolicy } from '../../src/protocol/index.ts';
import { toolInputProblem } from '../../src/run/tool-input.ts';

const POLICY: ToolPolicy = { webhookOrigins: ['https://hooks.example', 'http://127.0.0.1:9999'], allowLoopbackHttp: false, webhookSecretSet: true };
const schema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] };
const webhook = (url: string, name = 'weather') => ({ name, description: 'd', inputSchema: schema, execute: { type: 'webhook', url } });

function refusal(tools: unknown, policy: ToolPolicy = POLICY): ProtocolError {
  try {
    parseTools(tools, policy);
  } catch (error) {
    if (error instanceof ProtocolError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('host tools at POST /runs', () => {
  it('accepts webhook and client tools, and tells the runner nothing about where a webhook lives', () => {
    const tools = parseTools([webhook('https://hooks.example/weather'), { name: 'ask', inputSchema: { type: 'object' }, execute: { type: 'client' } }], POLICY);
    expect(tools.map((tool) => tool.execute.type)).toEqual(['webhook', 'client']);
    expect(JSON.stringify(toolDescriptors(tools))).not.toContain('hooks.example');
  });

  it('refuses an origin outside TOOL_WEBHOOK_ORIGINS as tool_not_allowed (the SSRF guard)', () => {
    for (const url of ['https://evil.example/x', 'https://hooks.example.evil.example/x', 'http://169.254.169.254/latest/meta-data', 'https://user:pw@hooks.example/x']) {
      const error = refusal([webhook(url)]);
      expect(error, url).toBeInstanceOf(ToolNotAllowedError);
      expect(error.field).toBe('tools[0].execute.url');
    }
  });

  it('calls loopback http only with auth off, and only when listed', () => {
    expect(refusal([webhook('http://127.0.0.1:9999/x')])).toBeInstanceOf(ToolNotAllowedError);
    expect(() => parseTools([webhook('http://127.0.0.1:9999/x')], { ...POLICY, allowLoopbackHttp: true })).not.toThrow();
    expect(refusal([webhook('http://127.0.0.1:8888/x')], { ...POLICY, allowLoopbackHttp: true })).toBeInstanceOf(ToolNotAllowedError);
  });

  it('refuses webhooks on a relay with no TOOL_WEBHOOK_SECRET to sign them', () => {
    expect(refusal([webhook('https://hooks.example/x')], { ...POLICY, webhookSecretSet: false }).message).toContain('TOOL_WEBHOOK_SECRET');
  });

  it('refuses a bad shape: duplicate names, too many tools, a non-object schema, bad names, unknown fields', () => {
    expect(refusal([webhook('https://hooks.example/a'), webhook('https://hooks.example/b')]).field).toBe('tools[1].name');
    expect(refusal(Array.from({ length: 33 }, (_, i) => webhook('https://hooks.example/a', `t${i}`))).field).toBe('tools');
    expect(refusal([{ ...webhook('https://hooks.example/a'), inputSchema: { type: 'string' } }]).field).toBe('tools[0].inputSchema.type');
    expect(refusal([{ ...webhook('https://hooks.example/a'), inputSchema: { type: 'object', required: [1] } }]).field).toBe('tools[0].inputSchema.required');
    expect(refusal([webhook('https://hooks.example/a', 'rm -rf')]).field).toBe('tools[0].name');
    expect(refusal([{ ...webhook('https://hooks.example/a'), extra: 1 }]).field).toBe('tools[0].extra');
    expect(refusal([{ ...webhook('https://hooks.example/a'), execute: { type: 'shell', url: 'x' } }]).field).toBe('tools[0].execute.type');
  });

  it("checks the demo's toolCalls against the run's tools", () => {
    const body = { prompt: 'hi', tools: [webhook('https://hooks.example/w')], harnessOptions: { toolCalls: [{ name: 'nope', input: {} }] } };
    expect(() => parseCreateRunBody(body, { defaultHarness: 'demo', allowUnsafe: false, tools: POLICY })).toThrow(/harnessOptions.toolCalls\[0\].name/);
    const ok = parseCreateRunBody({ ...body, harnessOptions: { toolCalls: [{ name: 'weather', input: { city: 'Oslo' } }] } }, { defaultHarness: 'demo', allowUnsafe: false, tools: POLICY });
    expect(ok.tools?.[0]?.name).toBe('weather');
  });
});

describe('host tool calls and outcomes', () => {
  it('reads the request chunk a harness writes, and nothing else', () => {
    expect(hostToolCallOf({ type: 'CUSTOM', name: HOST_TOOL_CALL_EVENT, value: { toolCallId: 'toolu_1', toolName: 'weather', input: { city: 'Oslo' } } })).toEqual({
      toolCallId: 'toolu_1',
      toolName: 'weather',
      input: { city: 'Oslo' },
    });
    expect(hostToolCallOf({ type: 'CUSTOM', name: 'other', value: { toolCallId: 'a', toolName: 'b' } })).toBeNull();
    expect(hostToolCallOf({ type: 'CUSTOM', name: HOST_TOOL_CALL_EVENT, value: { toolCallId: 'bad id\r\n', toolName: 'b' } })).toBeNull();
    expect(hostToolCallOf({ type: 'TOOL_CALL_END', toolCallId: 'a' })).toBeNull();
  });

  it('takes exactly one of output or error', () => {
    expect(parseToolResult({ toolCallId: 'c', output: { a: 1 } }).outcome).toEqual({ output: { a: 1 } });
    expect(parseToolResult({ toolCallId: 'c', output: null }).outcome).toEqual({ output: null });
    expect(parseToolResult({ toolCallId: 'c', error: { message: 'nope' } }).outcome).toEqual({ error: 'nope' });
    expect(() => parseToolResult({ toolCallId: 'c', output: 1, error: 'x' })).toThrow(ProtocolError);
    expect(() => parseToolResult({ toolCallId: 'c' })).toThrow(ProtocolError);
  });

  it("checks a call's input against the tool's JSON Schema, saying where it is wrong", () => {
    expect(toolInputProblem(schema, { city: 'Oslo' })).toBeNull();
    expect(toolInputProblem(schema, { city: 3 })).toMatch(/#\/city: .*string/);
    expect(toolInputProblem(schema, {})).toMatch(/city/);
  });
});
