import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, json, runBody, runId, startTestRunner, stream, type TestRunner } from './helpers.ts';

let runner: TestRunner;
beforeAll(async () => {
  runner = await startTestRunner();
});
afterAll(() => runner.close());

function errorOf(body: unknown): { code: string; message: string } {
  return (body as { error: { code: string; message: string } }).error;
}

describe('GET /health', () => {
  it('lists only the harnesses this machine can run', async () => {
    const answer = await json(`${runner.url}/health`);
    expect(answer.status).toBe(200);
    const health = answer.body as { harnesses: string[]; chatProviders: string[]; unavailable: Record<string, string> };
    expect(health).toMatchObject({ ok: true, harnesses: ['demo'], chatProviders: [] });
    // Why each other harness cannot run, naming what is missing and never a value.
    expect(Object.keys(health.unavailable).sort()).toEqual(['chat', 'claude-code', 'codex']);
    expect(health.unavailable['claude-code']).toContain('`claude` CLI is not on PATH');
    expect(health.unavailable.chat).toContain('ANTHROPIC_API_KEY');
  });
});

describe('POST /run with a bad body', () => {
  it.each([
    ['not JSON', '{"runId":', 'invalid_json', 'JSON'],
    ['an empty body', '', 'invalid_json', 'empty'],
    ['a JSON array', [], 'invalid_body', 'body'],
    ['no runId', { threadId: 't', harness: 'demo', messages: [{ role: 'user', content: 'x' }] }, 'invalid_body', 'runId'],
    ['a bad threadId', runBody('r_bad_thread', { threadId: 'no spaces allowed' }), 'invalid_body', 'threadId'],
    ['no messages', runBody('r_no_messages', { messages: [] }), 'invalid_body', 'messages'],
    ['a bad role', runBody('r_bad_role', { messages: [{ role: 'robot', content: 'x' }] }), 'invalid_body', 'messages[0].role'],
    ['an unknown demo option', runBody('r_bad_opt', { harnessOptions: { chunkz: 3 } }), 'invalid_body', 'harnessOptions.chunkz'],
    ['a demo option out of range', runBody('r_bad_range', { harnessOptions: { chunks: -1 } }), 'invalid_body', 'harnessOptions.chunks'],
    ['no tenant', { ...runBody('r_no_tenant'), tenant: undefined }, 'invalid_body', 'tenant'],
    ['an empty tenant', runBody('r_empty_tenant', { tenant: '' }), 'invalid_body', 'tenant'],
    ['an unknown claude-code option', runBody('r_bad_cc', { harness: 'claude-code', harnessOptions: { turbo: true } }), 'invalid_body', 'harnessOptions.turbo'],
    ['an unknown harness', runBody('r_unknown', { harness: 'gemini' }), 'unknown_harness', 'harness'],
  ])('answers 400 for %s, naming the problem', async (_label, body, code, mention) => {
    const answer = await json(`${runner.url}/run`, 'POST', body);
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body).code).toBe(code);
    expect(errorOf(answer.body).message).toContain(mention);
  });

  it('answers 413 for a body over the limit', async () => {
    const answer = await json(`${runner.url}/run`, 'POST', Buffer.alloc(17 * 1024 * 1024, 0x20));
    expect(answer.status).toBe(413);
    expect(errorOf(answer.body).code).toBe('payload_too_large');
  });

  it('starts nothing for a rejected body', async () => {
    const answer = await json(`${runner.url}/runs/r_bad_thread`);
    expect(answer.status).toBe(404);
  });
});

describe('harness availability', () => {
  it.each([
    ['claude-code', ['ANTHROPIC_API_KEY', 'wrangler secret put ANTHROPIC_API_KEY', '`claude`']],
    ['codex', ['OPENAI_API_KEY', 'wrangler secret put OPENAI_API_KEY', '`codex`']],
    ['chat', ['ANTHROPIC_API_KEY', 'wrangler secret put ANTHROPIC_API_KEY']],
  ])('answers 400 when %s has no key or CLI, saying what to set', async (harness, mentions) => {
    const answer = await json(`${runner.url}/run`, 'POST', runBody(runId(), { harness }));
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body).code).toBe('harness_unavailable');
    for (const mention of mentions) expect(errorOf(answer.body).message).toContain(mention);
  });

  it('asks for the OpenAI key when the chat model is an OpenAI one', async () => {
    const answer = await json(`${runner.url}/run`, 'POST', runBody(runId(), { harness: 'chat', model: 'gpt-5.1' }));
    expect(errorOf(answer.body).message).toContain('OPENAI_API_KEY');
  });

  it('names the missing CLI when the key is there', async () => {
    const keyed = await startTestRunner({ env: cleanEnv({ ANTHROPIC_API_KEY: 'sk-ant-test-key-123456', PATH: '/nonexistent' }) });
    try {
      const answer = await json(`${keyed.url}/run`, 'POST', runBody(runId(), { harness: 'claude-code' }));
      expect(answer.status).toBe(400);
      expect(errorOf(answer.body).message).toContain('`claude` CLI is not on PATH');
      expect(errorOf(answer.body).message).not.toContain('ANTHROPIC_API_KEY');
      const health = (await json(`${keyed.url}/health`)).body as Record<string, unknown>;
      expect(health).toMatchObject({ ok: true, harnesses: ['demo', 'chat'], chatProviders: ['anthropic'] });
      expect(JSON.stringify(health)).not.toContain('sk-ant-test-key-123456');
    } finally {
      await keyed.close();
    }
  });
});

describe('run ids', () => {
  it('answers 409 for a run id it already knows', async () => {
    const id = runId();
    const first = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 2, delayMs: 0 } }));
    await first.rest();
    const again = await json(`${runner.url}/run`, 'POST', runBody(id));
    expect(again.status).toBe(409);
    expect(errorOf(again.body).code).toBe('run_exists');
  });

  it.each([
    ['GET', '/runs/nope'],
    ['GET', '/runs/nope/stream'],
    ['POST', '/runs/nope/cancel'],
  ])('answers 404 for %s %s of an unknown run', async (method, path) => {
    const answer = await json(`${runner.url}${path}`, method);
    expect(answer.status).toBe(404);
    expect(errorOf(answer.body).code).toBe('run_not_found');
  });

  it('answers 404 for an unknown route', async () => {
    expect((await json(`${runner.url}/nowhere`)).status).toBe(404);
    expect((await json(`${runner.url}/runs/bad%20id/stream`)).status).toBe(404);
  });

  it.each(['abc', '-2', '1.5', '99999999999999999999'])('answers 400 for fromSeq=%s', async (fromSeq) => {
    const id = runId();
    await (await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 1, delayMs: 0 } }))).rest();
    const answer = await json(`${runner.url}/runs/${id}/stream?fromSeq=${fromSeq}`);
    expect(answer.status).toBe(400);
    expect(errorOf(answer.body).code).toBe('invalid_from_seq');
  });

  it('reports a run with GET /runs/:runId', async () => {
    const id = runId();
    const run = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 3, delayMs: 0 } }));
    const { chunks } = await run.rest();
    const answer = await json(`${runner.url}/runs/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ runId: id, threadId: 'thread_1', harness: 'demo', state: 'finished', lastSeq: chunks.length - 1 });
  });
});
