import { describe, expect, it } from 'vitest';
import { refusalMessage, refusalOf } from '../../src/runner/container-admission.ts';

/** The bodies @cloudflare/sandbox 0.12.10 (Sandbox.containerFetch) and @cloudflare/containers 0.3.7 answer a start with. */
const sdkCapacity = JSON.stringify({
  code: 'CONTAINER_UNAVAILABLE',
  message: 'there is no container instance that can be provided to this durable object',
  context: { reason: 'no_container_instance_available', retryable: true },
  httpStatus: 503,
});
const sdkRateLimited = JSON.stringify({
  code: 'INTERNAL_ERROR',
  message: 'Container is starting. Please retry in a moment.',
  context: { phase: 'startup', error: 'you are requesting too many containers per second' },
  httpStatus: 503,
});
const sdkStarting = JSON.stringify({ code: 'INTERNAL_ERROR', message: 'Container is starting. Please retry in a moment.', context: { phase: 'startup', error: 'the container is not listening' } });
const libraryCapacity = 'There is no Container instance available at this time.\nThis is likely because you have reached your max concurrent instance count (set in wrangler config) or are you currently provisioning the Container.';

describe('a refused container start, as the SDK reports it', () => {
  it('is capacity for CONTAINER_UNAVAILABLE and the platform\'s no-instance text', () => {
    expect(refusalOf(503, sdkCapacity)).toEqual({ kind: 'capacity', detail: 'there is no container instance that can be provided to this durable object' });
    expect(refusalOf(503, libraryCapacity)).toMatchObject({ kind: 'capacity', detail: 'There is no Container instance available at this time.' });
  });

  it('is a rate limit for a 429, or the rate-limit message inside a 503', () => {
    expect(refusalOf(429, 'you are requesting too many containers per second')).toMatchObject({ kind: 'rate' });
    expect(refusalOf(503, sdkRateLimited)).toMatchObject({ kind: 'rate' });
  });

  it('is no refusal while a container is merely starting (the SDK retries those)', () => {
    expect(refusalOf(503, sdkStarting)).toBeNull();
    expect(refusalOf(503, 'not json at all')).toBeNull();
  });

  it('names max_instances, where it is set, and what to change', () => {
    const message = refusalMessage('t123-1', { kind: 'capacity', detail: 'there is no container instance…' });
    expect(message).toContain('sandbox t123-1');
    expect(message).toContain('max_instances');
    expect(message).toContain('wrangler.toml');
    expect(message).toContain('SANDBOX_SLEEP_AFTER');
    expect(refusalMessage('t1', { kind: 'rate', detail: 'x' })).toContain('max_instances');
  });
});
