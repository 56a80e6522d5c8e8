import { describe, expect, it } from 'vitest';
import {
  DEMO_DEFAULTS,
  HarnessOptionsError,
  OptionNotAllowedError,
  eventFrame,
  eventFrameJson,
  parseCreateRunBody,
  parseDemoOptions,
  parseRunnerRunRequest,
  parseRunView,
  parseSeqCursor,
  parseTailFrame,
  ProtocolError,
  statusFrame,
  UnknownHarnessError,
  type RunView,
} from '../../src/protocol/index.ts';

/** Runs `fn`, expects a ProtocolError naming `field`, and returns it. */
function fieldError(fn: () => unknown, field: string): ProtocolError {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ProtocolError);
  const error = thrown as ProtocolError;
  expect(error.field).toBe(field);
  expect(error.message.startsWith(`${field}: `)).toBe(true);
  return error;
}

const DEMO = { defaultHarness: 'demo', allowUnsafe: false } as const;

describe('parseCreateRunBody', () => {
  it('folds prompt into one user message and applies the default harness', () => {
    expect(parseCreateRunBody({ prompt: 'hi' }, DEMO)).toEqual({ messages: [{ role: 'user', content: 'hi' }], harness: 'demo' });
    expect(parseCreateRunBody({ prompt: 'hi' }, { ...DEMO, defaultHarness: 'chat' }).harness).toBe('chat');
  });

  it('keeps messages, threadId, harness, model and the demo options as given (the demo fills its defaults)', () => {
    const messages = [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', content: 'x' }] },
      { role: 'assistant', content: null, toolCalls: [] },
      { role: 'tool', content: 'done', toolCallId: 't1' },
    ];
    expect(parseCreateRunBody({ messages, threadId: 'T_1-a', harness: 'demo', model: 'm', harnessOptions: { chunks: 2 } }, { ...DEMO, defaultHarness: 'codex' })).toEqual({
      messages,
      threadId: 'T_1-a',
      harness: 'demo',
      model: 'm',
      harnessOptions: { chunks: 2 },
    });
  });

  it("checks every harness's options against the one schema", () => {
    expect(parseCreateRunBody({ prompt: 'x', harness: 'claude-code', harnessOptions: { maxTurns: 3, permissionMode: 'plan' } }, DEMO).harnessOptions).toEqual({ maxTurns: 3, permissionMode: 'plan' });
    expect(parseCreateRunBody({ prompt: 'x', harness: 'chat', harnessOptions: { provider: 'openai', systemPrompt: 'be brief' } }, DEMO).harnessOptions).toEqual({ provider: 'openai', systemPrompt: 'be brief' });
    expect(fieldError(() => parseCreateRunBody({ prompt: 'x', harness: 'codex', harnessOptions: 'fast' }, DEMO), 'harnessOptions')).toBeInstanceOf(HarnessOptionsError);
    for (const [harness, harnessOptions, field] of [
      ['claude-code', { anything: [1] }, 'harnessOptions.anything'],
      ['chat', { evil: 1 }, 'harnessOptions.evil'],
      ['claude-code', { maxTurns: '1; touch /tmp/x; #' }, 'harnessOptions.maxTurns'],
      ['claude-code', { maxTurns: 1.5 }, 'harnessOptions.maxTurns'],
      ['claude-code', { sessionId: "x' ; rm -rf / ; '" }, 'harnessOptions.sessionId'],
      ['codex', { modelReasoningEffort: 'max"\nsandbox_mode="danger-full-access' }, 'harnessOptions.modelReasoningEffort'],
      ['codex', { sandboxMode: 'yolo' }, 'harnessOptions.sandboxMode'],
      ['chat', { provider: 'gemini' }, 'harnessOptions.provider'],
    ] as const) {
      expect(fieldError(() => parseCreateRunBody({ prompt: 'x', harness, harnessOptions }, DEMO), field)).toBeInstanceOf(HarnessOptionsError);
    }
  });

  it('refuses the unsafe modes unless the operator allows them', () => {
    for (const [harness, harnessOptions, field] of [
      ['claude-code', { permissionMode: 'bypassPermissions' }, 'harnessOptions.permissionMode'],
      ['codex', { sandboxMode: 'danger-full-access' }, 'harnessOptions.sandboxMode'],
    ] as const) {
      expect(fieldError(() => parseCreateRunBody({ prompt: 'x', harness, harnessOptions }, DEMO), field)).toBeInstanceOf(OptionNotAllowedError);
      expect(parseCreateRunBody({ prompt: 'x', harness, harnessOptions }, { ...DEMO, allowUnsafe: true }).harnessOptions).toEqual(harnessOptions);
    }
  });

  it('reads own properties only: an inherited option or field is not there', () => {
    const options = parseCreateRunBody({ prompt: 'x', harness: 'claude-code', harnessOptions: Object.assign(Object.create({ maxTurns: '1; #' }), { permissionMode: 'plan' }) }, DEMO).harnessOptions!;
    expect(options).toEqual({ permissionMode: 'plan' });
    expect(Object.getPrototypeOf(options)).toBeNull();
    fieldError(() => parseCreateRunBody(Object.create({ prompt: 'inherited' }), DEMO), 'prompt');
  });

  it('refuses __proto__, constructor and prototype as keys, naming the field', () => {
    const proto = JSON.parse('{"prompt": "x", "harnessOptions": {"__proto__": {"maxTurns": "1; touch /tmp/x; #"}}, "harness": "claude-code"}');
    expect(fieldError(() => parseCreateRunBody(proto, DEMO), 'harnessOptions.__proto__')).toBeInstanceOf(HarnessOptionsError);
    fieldError(() => parseCreateRunBody(JSON.parse('{"prompt": "x", "__proto__": {}}'), DEMO), 'body.__proto__');
    fieldError(() => parseCreateRunBody({ messages: [{ role: 'user', content: 'x', metadata: { deep: [{ constructor: 1 }] } }] }, DEMO), 'messages[0].metadata.deep[0].constructor');
    fieldError(() => parseCreateRunBody({ prompt: 'x', harnessOptions: { prototype: 1 } }, DEMO), 'harnessOptions.prototype');
  });

  it.each([
    ['not an object', [], 'body'],
    ['null', null, 'body'],
    ['an unknown field', { prompt: 'x', stream: true }, 'stream'],
    ['neither prompt nor messages', {}, 'prompt'],
    ['both prompt and messages', { prompt: 'x', messages: [{ role: 'user', content: 'y' }] }, 'prompt'],
    ['an empty prompt', { prompt: '' }, 'prompt'],
    ['a blank prompt', { prompt: ' \t' }, 'prompt'],
    ['a non-string prompt', { prompt: ['x'] }, 'prompt'],
    ['messages not an array', { messages: 'x' }, 'messages'],
    ['no messages', { messages: [] }, 'messages'],
    ['too many messages', { messages: Array.from({ length: 1_001 }, () => ({ role: 'user', content: 'x' })) }, 'messages'],
    ['a message not an object', { messages: [{ role: 'user', content: 'a' }, 3] }, 'messages[1]'],
    ['a bad role', { messages: [{ role: 'admin', content: 'x' }] }, 'messages[0].role'],
    ['a missing role', { messages: [{ content: 'x' }] }, 'messages[0].role'],
    ['bad content', { messages: [{ role: 'user', content: { text: 'x' } }] }, 'messages[0].content'],
    ['a long threadId', { prompt: 'x', threadId: 't'.repeat(129) }, 'threadId'],
    ['a threadId with a space', { prompt: 'x', threadId: 'a b' }, 'threadId'],
    ['a numeric threadId', { prompt: 'x', threadId: 5 }, 'threadId'],
    ['a non-string model', { prompt: 'x', model: 1 }, 'model'],
    ['an empty model', { prompt: 'x', model: '' }, 'model'],
    ['a model over 200 characters', { prompt: 'x', model: 'm'.repeat(201) }, 'model'],
    ['a model with shell syntax', { prompt: 'x', model: "sonnet' --dangerously-skip-permissions '" }, 'model'],
    ['a bad demo option', { prompt: 'x', harnessOptions: { delayMs: -1 } }, 'harnessOptions.delayMs'],
  ])('rejects %s, naming the field', (_name, body, field) => {
    fieldError(() => parseCreateRunBody(body, DEMO), field);
  });

  it('accepts a threadId of 128 characters', () => {
    expect(parseCreateRunBody({ prompt: 'x', threadId: 'a'.repeat(128) }, DEMO).threadId).toHaveLength(128);
  });

  it('throws UnknownHarnessError for an unknown harness, given or by default', () => {
    expect(fieldError(() => parseCreateRunBody({ prompt: 'x', harness: 'bash' }, DEMO), 'harness')).toBeInstanceOf(UnknownHarnessError);
    expect(fieldError(() => parseCreateRunBody({ prompt: 'x', harness: 3 }, DEMO), 'harness')).toBeInstanceOf(UnknownHarnessError);
  });
});

describe('parseRunnerRunRequest', () => {
  const valid = { runId: 'run_1', threadId: 'th', tenant: null, messages: [{ role: 'user', content: 'x' }], harness: 'demo' };

  it('accepts a request, its demo options as given', () => {
    expect(parseRunnerRunRequest(valid)).toEqual(valid);
    expect(parseRunnerRunRequest({ ...valid, tenant: 'acme', model: 'm', harnessOptions: { failAt: 3 } })).toEqual({
      ...valid,
      tenant: 'acme',
      model: 'm',
      harnessOptions: { failAt: 3 },
    });
  });

  it('takes no path from the request: the runner derives the workspace from (tenant, threadId); `workspace` is only what to set up', () => {
    expect(() => parseRunnerRunRequest({ ...valid, workspace: '/etc' })).toThrow(/^workspace: expected an object/);
    expect(() => parseRunnerRunRequest({ ...valid, workspace: { dir: '/etc' } })).toThrow(/^workspace\.dir: unknown field/);
    const workspace = { source: { type: 'git', url: 'file:///tmp/repo', ref: 'main' }, setup: ['npm ci'], secrets: ['DEPLOY_PAT'] };
    expect(parseRunnerRunRequest({ ...valid, workspace }).workspace).toEqual(workspace);
  });

  it.each([
    ['not an object', 'x', 'body'],
    ['no runId', { ...valid, runId: undefined }, 'runId'],
    ['a runId with a slash', { ...valid, runId: 'a/b' }, 'runId'],
    ['a runId over 128', { ...valid, runId: 'r'.repeat(129) }, 'runId'],
    ['a bad threadId', { ...valid, threadId: '' }, 'threadId'],
    ['no messages', { ...valid, messages: undefined }, 'messages'],
    ['a bad message', { ...valid, messages: [{ role: 'user', content: 1 }] }, 'messages[0].content'],
    ['an empty model', { ...valid, model: '' }, 'model'],
    ['an unknown demo option', { ...valid, harnessOptions: { speed: 1 } }, 'harnessOptions.speed'],
    ['no tenant', { ...valid, tenant: undefined }, 'tenant'],
    ['an empty tenant', { ...valid, tenant: '' }, 'tenant'],
    ['a tenant that is not a string', { ...valid, tenant: 7 }, 'tenant'],
  ])('rejects %s, naming the field', (_name, body, field) => {
    fieldError(() => parseRunnerRunRequest(body), field);
  });

  it('rejects an unknown harness with UnknownHarnessError', () => {
    expect(fieldError(() => parseRunnerRunRequest({ ...valid, harness: 'nope' }), 'harness')).toBeInstanceOf(UnknownHarnessError);
  });
});

describe('parseDemoOptions', () => {
  it('answers the defaults for undefined and an empty object', () => {
    expect(parseDemoOptions(undefined)).toEqual(DEMO_DEFAULTS);
    expect(parseDemoOptions({})).toEqual(DEMO_DEFAULTS);
    expect(parseDemoOptions(undefined)).not.toBe(DEMO_DEFAULTS);
  });

  it('accepts every option at its bounds', () => {
    expect(parseDemoOptions({ chunks: 0, delayMs: 60_000, chunkBytes: 1, failAt: 0, crashAt: 1_000_000, stallAt: 7 })).toEqual({
      chunks: 0,
      delayMs: 60_000,
      chunkBytes: 1,
      failAt: 0,
      crashAt: 1_000_000,
      stallAt: 7,
    });
    expect(parseDemoOptions({ chunkBytes: 1_048_576 }).chunkBytes).toBe(1_048_576);
  });

  it.each([
    ['an array', [], 'harnessOptions'],
    ['null', null, 'harnessOptions'],
    ['an unknown key', { chunk: 3 }, 'harnessOptions.chunk'],
    ['negative chunks', { chunks: -1 }, 'harnessOptions.chunks'],
    ['fractional chunks', { chunks: 2.5 }, 'harnessOptions.chunks'],
    ['chunks as a string', { chunks: '3' }, 'harnessOptions.chunks'],
    ['chunks over the bound', { chunks: 1_000_001 }, 'harnessOptions.chunks'],
    ['chunkBytes of 0', { chunkBytes: 0 }, 'harnessOptions.chunkBytes'],
    ['delayMs over a minute', { delayMs: 60_001 }, 'harnessOptions.delayMs'],
    ['NaN failAt', { failAt: Number.NaN }, 'harnessOptions.failAt'],
    ['a prototype key', JSON.parse('{"__proto__": {"chunks": 1}}'), 'harnessOptions.__proto__'],
  ])('rejects %s, naming the field', (_name, value, field) => {
    fieldError(() => parseDemoOptions(value), field);
  });

  it('names the field under the path it is given', () => {
    fieldError(() => parseDemoOptions({ chunks: -1 }, 'request.harnessOptions'), 'request.harnessOptions.chunks');
  });
});

describe('parseSeqCursor', () => {
  it.each([
    [null, -1],
    [undefined, -1],
    ['', -1],
    ['-1', -1],
    ['0', 0],
    ['12', 12],
    ['007', 7],
    ['999999999999999', 999_999_999_999_999],
  ])('reads %j as %d', (raw, value) => {
    expect(parseSeqCursor(raw)).toBe(value);
  });

  it.each(['abc', '-2', '1.5', '1e3', '+1', ' 1', '1 ', '0x10', '--1', '1_000', '9999999999999999', 'NaN', 'Infinity'])('rejects %j', (raw) => {
    expect(parseSeqCursor(raw)).toBeNull();
  });
});

const RECORD: RunView = { runId: 'run_1', threadId: 't', status: 'completed', lastSeq: 4, startedAt: 1, finishedAt: 3, updatedAt: 3, error: { message: 'm', code: 'c' } };

describe('parseRunView', () => {
  it('accepts a full record and a minimal one, dropping unknown fields', () => {
    expect(parseRunView(RECORD)).toEqual(RECORD);
    const minimal = { runId: 'r', threadId: 't', status: 'running', lastSeq: -1, startedAt: 0, updatedAt: 0 };
    expect(parseRunView({ ...minimal, links: {} })).toEqual(minimal);
    expect(parseRunView({ ...minimal, error: { message: 'no code' } }).error).toEqual({ message: 'no code' });
  });

  it.each([
    ['not an object', 'x', 'record'],
    ['a legacy status', { ...RECORD, status: 'done' }, 'record.status'],
    ['core interrupted status', { ...RECORD, status: 'interrupted' }, 'record.status'],
    ['an empty runId', { ...RECORD, runId: '' }, 'record.runId'],
    ['a missing threadId', { ...RECORD, threadId: undefined }, 'record.threadId'],
    ['lastSeq below -1', { ...RECORD, lastSeq: -2 }, 'record.lastSeq'],
    ['a fractional lastSeq', { ...RECORD, lastSeq: 1.5 }, 'record.lastSeq'],
    ['a string startedAt', { ...RECORD, startedAt: '1' }, 'record.startedAt'],
    ['a negative updatedAt', { ...RECORD, updatedAt: -1 }, 'record.updatedAt'],
    ['a null finishedAt', { ...RECORD, finishedAt: null }, 'record.finishedAt'],
    ['an error without message', { ...RECORD, error: { code: 'x' } }, 'record.error'],
    ['an error with a numeric code', { ...RECORD, error: { message: 'm', code: 1 } }, 'record.error.code'],
  ])('rejects %s, naming the field', (_name, value, field) => {
    fieldError(() => parseRunView(value), field);
  });

  it('names fields under the path it is given', () => {
    fieldError(() => parseRunView({ ...RECORD, lastSeq: 'x' }, 'frame.record'), 'frame.record.lastSeq');
  });
});

describe('parseTailFrame', () => {
  const chunk = { type: 'TEXT_MESSAGE_CONTENT', messageId: 'm', delta: 'x' };

  it('round-trips an event frame and a status frame through JSON', () => {
    expect(parseTailFrame(JSON.parse(JSON.stringify(eventFrame(3, chunk as never))))).toEqual({ seq: 3, id: '3', chunk });
    expect(parseTailFrame(JSON.parse(eventFrameJson(3, JSON.stringify(chunk))))).toEqual({ seq: 3, id: '3', chunk });
    expect(parseTailFrame(JSON.parse(JSON.stringify(statusFrame(RECORD))))).toEqual({ type: 'status', record: RECORD });
  });

  it('rebuilds id from seq rather than trusting it', () => {
    expect(parseTailFrame({ seq: 5, id: '9', chunk })).toEqual({ seq: 5, id: '5', chunk });
  });

  it.each([
    ['not an object', [1], 'frame'],
    ['no seq', { chunk }, 'frame.seq'],
    ['a negative seq', { seq: -1, chunk }, 'frame.seq'],
    ['a string seq', { seq: '1', chunk }, 'frame.seq'],
    ['no chunk', { seq: 1 }, 'frame.chunk'],
    ['a chunk without type', { seq: 1, chunk: { delta: 'x' } }, 'frame.chunk'],
    ['a chunk with an empty type', { seq: 1, chunk: { type: '' } }, 'frame.chunk'],
    ['a status frame without record', { type: 'status' }, 'frame.record'],
    ['a status frame with a bad record', { type: 'status', record: { ...RECORD, status: 'x' } }, 'frame.record.status'],
  ])('rejects %s, naming the field', (_name, value, field) => {
    fieldError(() => parseTailFrame(value), field);
  });
});
