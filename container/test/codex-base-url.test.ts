import { describe, expect, it } from 'vitest';
import { codexBaseUrl } from '../src/harnesses/codex.ts';

describe('codexBaseUrl: OPENAI_BASE_URL as the -c openai_base_url TOML string', () => {
  it('passes a Cloudflare AI Gateway URL through, without a trailing slash', () => {
    expect(codexBaseUrl('https://gateway.ai.cloudflare.com/v1/acct/gw/openai/')).toBe('https://gateway.ai.cloudflare.com/v1/acct/gw/openai');
    expect(codexBaseUrl(undefined)).toBeUndefined();
    expect(codexBaseUrl('  ')).toBeUndefined();
  });

  it('refuses what is not an http(s) URL, and never lets a quote into the TOML', () => {
    expect(() => codexBaseUrl('not a url')).toThrow('OPENAI_BASE_URL');
    expect(() => codexBaseUrl('file:///etc/passwd')).toThrow('http(s)');
    expect(codexBaseUrl('https://x.test/a"b')).toBe('https://x.test/a%22b');
  });
});
