import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../scripts/local-stack.ts';
import { CHROMIUM, HAS_CHROMIUM, launchChromium } from './chromium.ts';

/**
 * The demo page against a relay with API_TOKEN set, in Debian's chromium.
 * The page's API token lives in its Advanced field only, so a reload forgets
 * it: the run the tab was following still streams with its attach token
 * (kept in sessionStorage), and the conversation, which only the API token
 * may read, is read once the token is typed again.
 */
if (!HAS_CHROMIUM) console.warn(`test/e2e/browser-auth.test.ts skipped: ${CHROMIUM} is missing (Debian: apt-get install -y chromium).`);

const API_TOKEN = 'browser-test-api-token-0123456789';
const RUN_DONE_MS = 60_000;

async function waitForSettled(page: Page, status: string): Promise<void> {
  await page.waitForFunction((want) => document.querySelector<HTMLElement>('#status')?.dataset.status === want, status, { timeout: RUN_DONE_MS });
  await page.waitForSelector('#conn:is([data-state="closed"], [data-state="idle"])', { timeout: RUN_DONE_MS });
}

const shownPrompts = (page: Page) => page.$$eval('.msg.user .msg-text', (nodes) => nodes.map((node) => node.textContent));
const assistantTexts = (page: Page) => page.$$eval('.msg.assistant .msg-text', (nodes) => nodes.map((node) => node.textContent));

describe.skipIf(!HAS_CHROMIUM)('the demo page with auth on', () => {
  let dir: string;
  let stack: LocalStack;
  let browser: BrowserContext;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-e2e-browser-auth-'));
    stack = await startLocalStack({ port: 0, runnerPort: 0, persistTo: join(dir, 'state'), vars: { API_TOKEN } });
    browser = await launchChromium(join(dir, 'profile'));
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('starts a conversation with the API token, keeps streaming after a reload with the attach token, and reads the thread once the token is typed again', async () => {
    expect(await (await fetch(`${stack.url}/health`)).json()).toMatchObject({ auth: 'on' });
    const page = await browser.newPage();
    await page.goto(`${stack.url}/`);
    await page.fill('#prompt', 'Who may read this');
    await page.click('#advanced summary');
    await page.fill('#api-token', API_TOKEN);
    await page.fill('#harness-options', JSON.stringify({ chunks: 4, delayMs: 5 }));
    await page.click('#start');
    await page.waitForURL(/\?thread=run_[0-9a-f]{32}$/);
    const threadId = new URL(page.url()).searchParams.get('thread')!;
    await waitForSettled(page, 'completed');
    const streamed = await assistantTexts(page);
    expect(streamed).toHaveLength(2);

    // Without the token the thread is 401 to the page; the run it followed is not (its attach token).
    expect((await fetch(`${stack.url}/threads/${threadId}`)).status).toBe(401);
    await page.reload();
    await page.waitForSelector('#error:not([hidden])');
    await expect(page.locator('#error').textContent()).resolves.toContain('API token');
    await waitForSettled(page, 'completed');
    expect(await assistantTexts(page)).toEqual(streamed);
    expect(await shownPrompts(page)).toEqual(['Who may read this']);
    await expect(page.locator('#advanced').getAttribute('open')).resolves.not.toBeNull();

    // Typed again, the token reads the whole conversation from the thread.
    await page.fill('#api-token', API_TOKEN);
    await page.press('#api-token', 'Tab');
    await page.waitForSelector('.turn.history .msg.user');
    await waitForSettled(page, 'completed');
    await expect(page.locator('#error').isHidden()).resolves.toBe(true);
    expect(await shownPrompts(page)).toEqual(['Who may read this']);
    expect(await assistantTexts(page)).toEqual(streamed);

    // And a follow-up is the thread's second turn.
    await page.fill('#prompt', 'And now');
    await page.click('#start');
    await page.waitForFunction(() => document.querySelectorAll('.msg.user').length === 2);
    await waitForSettled(page, 'completed');
    const summary = (await (await fetch(`${stack.url}/threads/${threadId}`, { headers: { authorization: `Bearer ${API_TOKEN}` } })).json()) as { runs: unknown[] };
    expect(summary.runs).toHaveLength(2);
    await page.close();
  });
});
