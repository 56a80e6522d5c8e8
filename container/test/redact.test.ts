import { describe, expect, it } from 'vitest';
import { REDACTED, createRedactor } from '../src/redact.ts';

describe('createRedactor', () => {
  const redact = createRedactor({
    ANTHROPIC_API_KEY: 'sk-ant-0123456789',
    CLAUDE_CODE_OAUTH_TOKEN: 'oauth-"quoted"-token',
    SHORT_KEY: 'abc',
    PATH: '/usr/bin:/bin',
  });

  it('scrubs every credential-named value, raw or JSON-escaped', () => {
    expect(redact('key=sk-ant-0123456789 twice sk-ant-0123456789')).toBe(`key=${REDACTED} twice ${REDACTED}`);
    expect(redact(JSON.stringify({ token: 'oauth-"quoted"-token' }))).toBe(`{"token":"${REDACTED}"}`);
  });

  it('leaves other variables and too-short values alone', () => {
    expect(redact('/usr/bin:/bin abc')).toBe('/usr/bin:/bin abc');
  });

  it('is the identity when there is no secret', () => {
    expect(createRedactor({ HOME: '/root' })('sk-ant-0123456789')).toBe('sk-ant-0123456789');
  });
});
