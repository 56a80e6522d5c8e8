import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ConfigError, readConfig, type RelayEnv } from '../../src/config.ts';
import { onError } from '../../src/http/errors.ts';

const env = (vars: Record<string, string>) => vars as unknown as RelayEnv;

describe('configuration', () => {
  it('reads defaults from an empty environment', () => {
    expect(readConfig(env({}))).toMatchObject({
      defaultHarness: 'demo',
      stallTimeoutMs: 120_000,
      runTtlMs: 604_800_000,
      runnerUrl: undefined,
      apiToken: undefined,
      sandbox: { reuse: 'thread', maxAgeMs: 86_400_000 },
    });
  });

  it.each([
    ['DEFAULT_HARNESS', 'gpt'],
    ['STALL_TIMEOUT_SECONDS', 'soon'],
    ['RUN_TTL_SECONDS', '-1'],
    ['ALLOWED_ORIGINS', 'https://*.example.com'],
    ['SANDBOX_REUSE', 'always'],
    ['SANDBOX_SLEEP_AFTER', 'soon'],
    ['SANDBOX_SLEEP_AFTER', '10 minutes'],
  ])('refuses %s=%s with a ConfigError that names the variable', (name, value) => {
    expect(() => readConfig(env({ [name]: value }))).toThrowError(ConfigError);
    expect(() => readConfig(env({ [name]: value }))).toThrowError(name);
  });

  it('reads SANDBOX_SLEEP_AFTER as the SDK\'s time expression; unset leaves the SDK\'s default', () => {
    expect(readConfig(env({})).sandbox.sleepAfter).toBeUndefined();
    expect(readConfig(env({ SANDBOX_SLEEP_AFTER: '90' })).sandbox.sleepAfter).toBe('90s');
    expect(readConfig(env({ SANDBOX_SLEEP_AFTER: ' 2m ' })).sandbox.sleepAfter).toBe('2m');
    expect(readConfig(env({ SANDBOX_SLEEP_AFTER: '1h' })).sandbox.sleepAfter).toBe('1h');
  });

  it('answers a request that meets a bad configuration with 500 misconfigured and the reason', async () => {
    const app = new Hono<{ Bindings: RelayEnv }>();
    app.onError(onError);
    app.get('/', (c) => c.json(readConfig(c.env)));
    const res = await app.request('/', {}, env({ DEFAULT_HARNESS: 'gpt' }));
    expect(res.status).toBe(500);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('misconfigured');
    expect(body.error.message).toContain('DEFAULT_HARNESS');
  });
});
