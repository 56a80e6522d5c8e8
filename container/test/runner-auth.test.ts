import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunnerRunStatus } from '../../src/protocol/index.ts';
import { startRunner } from '../src/server.ts';
import { cleanEnv, json, runBody, runId, startTestRunner, stream, TEST_RUNNER_TOKEN, type JsonAnswer, type TestRunner } from './helpers.ts';

const RUNNER_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

let runner: TestRunner;
beforeAll(async () => {
  runner = await startTestRunner();
});
afterAll(() => runner.close());

function codeOf(answer: JsonAnswer): string {
  return (answer.body as { error: { code: string } }).error.code;
}

const WRONG = [
  ['no Authorization header', { authorization: null }],
  ['a wrong token', { authorization: 'Bearer not-the-runner-token-at-all' }],
  ['the token with one character changed', { authorization: `Bearer ${TEST_RUNNER_TOKEN.slice(0, -1)}X` }],
  ['a prefix of the token', { authorization: `Bearer ${TEST_RUNNER_TOKEN.slice(0, 8)}` }],
  ['another scheme', { authorization: `Basic ${TEST_RUNNER_TOKEN}` }],
  ['the bare token', { authorization: TEST_RUNNER_TOKEN }],
] as const;

describe('the runner token', () => {
  it.each(WRONG)('POST /run with %s answers 401 and starts no harness', async (_label, headers) => {
    const id = runId('unauth');
    const answer = await json(`${runner.url}/run`, 'POST', runBody(id), { ...headers });
    expect(answer.status).toBe(401);
    expect(codeOf(answer)).toBe('unauthorized');
    expect((await json(`${runner.url}/runs/${id}`)).status).toBe(404);
    expect(runner.logs.join('\n')).not.toContain(id);
  });

  it.each(WRONG)('with %s, a running run can be neither read nor cancelled', async (_label, headers) => {
    const id = runId('guarded');
    const run = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 200, delayMs: 5 } }));
    await run.chunks(3);
    for (const [method, path] of [
      ['GET', `/runs/${id}`],
      ['GET', `/runs/${id}/stream?fromSeq=-1`],
      ['POST', `/runs/${id}/cancel`],
    ] as const) {
      const answer = await json(`${runner.url}${path}`, method, undefined, { ...headers });
      expect(answer.status, `${method} ${path}`).toBe(401);
      expect(codeOf(answer)).toBe('unauthorized');
    }
    // The refused cancel stopped nothing: the run streams on to its end.
    const { chunks, end } = await run.rest();
    expect(end).toBe('end');
    expect(chunks.at(-1)?.type).toBe('RUN_FINISHED');
    expect(((await json(`${runner.url}/runs/${id}`)).body as RunnerRunStatus).state).toBe('finished');
  });

  it('accepts the scheme in any case', async () => {
    const id = runId('scheme');
    const answer = await json(`${runner.url}/runs/${id}`, 'GET', undefined, { authorization: `bearer ${TEST_RUNNER_TOKEN}` });
    expect(answer.status).toBe(404);
  });

  it('answers 401 on unknown routes too, so nothing is learned without the token', async () => {
    expect((await json(`${runner.url}/nowhere`, 'GET', undefined, { authorization: null })).status).toBe(401);
  });

  it('serves GET /health without the token, and it shows neither the token nor any run', async () => {
    const id = runId('health');
    await (await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 1, delayMs: 0 } }))).rest();
    const answer = await json(`${runner.url}/health`, 'GET', undefined, { authorization: null });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, harnesses: ['demo'] });
    const text = JSON.stringify(answer);
    expect(text).not.toContain(TEST_RUNNER_TOKEN);
    expect(text).not.toContain(id);
  });
});

describe('browsers and body types', () => {
  it.each([
    ['GET', '/health'],
    ['POST', '/run'],
    ['GET', '/runs/x'],
    ['POST', '/runs/x/cancel'],
  ] as const)('%s %s with an Origin header answers 403, token or not', async (method, path) => {
    const id = runId('origin');
    const body = method === 'POST' && path === '/run' ? runBody(id) : undefined;
    const answer = await json(`${runner.url}${path}`, method, body, { origin: 'http://127.0.0.1:8787' });
    expect(answer.status).toBe(403);
    expect(codeOf(answer)).toBe('forbidden_origin');
    expect(runner.logs.join('\n')).not.toContain(id);
  });

  it.each([
    ['text/plain', { 'content-type': 'text/plain' }],
    ['a form type', { 'content-type': 'application/x-www-form-urlencoded' }],
    ['no Content-Type', { 'content-type': null }],
  ])('POST /run with %s answers 415 and starts nothing', async (_label, headers) => {
    const id = runId('media');
    const answer = await json(`${runner.url}/run`, 'POST', runBody(id), headers);
    expect(answer.status).toBe(415);
    expect(codeOf(answer)).toBe('unsupported_media_type');
    expect((await json(`${runner.url}/runs/${id}`)).status).toBe(404);
  });

  it('accepts JSON with a charset', async () => {
    const id = runId('charset');
    const run = await stream(`${runner.url}/run`, 'POST', runBody(id, { harnessOptions: { chunks: 0 } }), { 'content-type': 'Application/JSON; charset=utf-8' });
    expect((await run.rest()).chunks.at(-1)?.type).toBe('RUN_FINISHED');
  });
});

describe('a runner with no token', () => {
  it.each([
    ['unset', {}],
    ['blank', { RUNNER_TOKEN: '   ' }],
    ['too short', { RUNNER_TOKEN: 'short' }],
  ])('refuses to start when RUNNER_TOKEN is %s', async (_label, extra) => {
    await expect(startRunner({ port: 0, env: cleanEnv(extra), log: () => {} })).rejects.toThrow(/RUNNER_TOKEN/);
  });

  it('starts with RUNNER_TOKEN from its environment', async () => {
    const started = await startRunner({ port: 0, env: cleanEnv({ RUNNER_TOKEN: TEST_RUNNER_TOKEN }), log: () => {} });
    try {
      expect((await json(`${started.url}/runs/nope`)).status).toBe(404);
    } finally {
      await started.close();
    }
  });

  it('main.ts exits non-zero naming RUNNER_TOKEN', async () => {
    const child = spawn(process.execPath, [RUNNER_MAIN], { env: cleanEnv({ RUNNER_PORT: '0' }), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (data: string) => (stderr += data));
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).not.toBe(0);
    expect(stderr).toContain('RUNNER_TOKEN is not set');
    expect(stderr).not.toContain('    at ');
  });
});
