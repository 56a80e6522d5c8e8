import { exports } from 'cloudflare:workers';
import { expect, it } from 'vitest';

it('answers /health', async () => {
  const res = await exports.default.fetch('http://127.0.0.1:8787/health');
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ ok: true, auth: 'off' });
});
