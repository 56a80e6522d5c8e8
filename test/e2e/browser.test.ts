import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalStack, type LocalStack } from '../../scripts/local-stack.ts';
import { isStatusFrame, parseTailFrame, parseRunView, type RunView } from '../../src/protocol/index.ts';
import { CHROMIUM, HAS_CHROMIUM, launchChromium } from './chromium.ts';

/**
 * The demo page against the real local stack (runner + wrangler dev), in
 * Debian's chromium: start a run, reload mid-run, and check that the page
 * resumes with every text exactly once, as a second tab also shows.
 */
if (!HAS_CHROMIUM) console.warn(`test/e2e/browser.test.ts skipped: ${CHROMIUM} is missing (Debian: apt-get install -y chromium).`);

const ARTIFACTS = fileURLToPath(new URL('../artifacts/', import.meta.url));
const PROMPT = 'Explain resumable streams';
const HARNESS_OPTIONS = { chunks: 150, delayMs: 25 };
const RUN_DONE_MS = 60_000;

interface ShownMessage {
  id: string;
  text: string;
}

/** Ground truth from the server: each assistant message's TEXT_MESSAGE_CONTENT deltas, concatenated, in order. */
async function runText(url: string, runId: string): Promise<{ messages: ShownMessage[]; record: RunView }> {
  const res = await fetch(`${url}/runs/${runId}/events?fromSeq=-1`);
  expect(res.status).toBe(200);
  const texts = new Map<string, string>();
  let record: RunView | null = null;
  for (const line of (await res.text()).split('\n')) {
    if (line.trim() === '') continue;
    const frame = parseTailFrame(JSON.parse(line));
    if (isStatusFrame(frame)) {
      record = frame.record;
      continue;
    }
    const chunk = frame.chunk as unknown as { type: string; messageId?: string; delta?: string };
    if (chunk.type === 'TEXT_MESSAGE_CONTENT') texts.set(chunk.messageId!, (texts.get(chunk.messageId!) ?? '') + chunk.delta);
  }
  expect(record).not.toBeNull();
  return { messages: [...texts].map(([id, text]) => ({ id, text })), record: record! };
}

async function shownMessages(page: Page): Promise<ShownMessage[]> {
  return page.$$eval('.msg.assistant', (nodes) =>
    nodes.map((node) => ({ id: (node as HTMLElement).dataset.messageId ?? '', text: node.querySelector('.msg-text')?.textContent ?? '' })),
  );
}

async function waitForStatus(page: Page, status: string): Promise<void> {
  await page.waitForFunction((want) => document.querySelector<HTMLElement>('#status')?.dataset.status === want, status, { timeout: RUN_DONE_MS });
}

const shownSeq = (page: Page) => page.$eval('#seq', (node) => Number((node as HTMLElement).dataset.seq));

describe.skipIf(!HAS_CHROMIUM)('the demo page in a browser', () => {
  let dir: string;
  let stack: LocalStack;
  let browser: BrowserContext;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'relay-e2e-browser-'));
    stack = await startLocalStack({ port: 0, runnerPort: 0, persistTo: join(dir, 'state') });
    browser = await launchChromium(join(dir, 'profile'));
  });

  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page at / with the API beside it', async () => {
    const page = await browser.newPage();
    const res = await page.goto(`${stack.url}/`);
    expect(res?.status()).toBe(200);
    await expect(page.title()).resolves.toBe('harness-relay');
    expect(await page.$$eval('#harness option', (options) => options.map((o) => (o as HTMLOptionElement).value))).toEqual(['demo', 'claude-code', 'codex', 'chat']);
    expect(await (await fetch(`${stack.url}/health`)).json()).toMatchObject({ ok: true });
    // An error from POST /runs is shown in the API's own words.
    await page.fill('#prompt', 'hello');
    await page.click('#advanced summary');
    await page.fill('#harness-options', '{"chunks": -1}');
    await page.click('#start');
    await page.waitForSelector('#error:not([hidden])');
    await expect(page.locator('#error').textContent()).resolves.toContain('harnessOptions.chunks: expected an integer from 0 to');
    expect(new URL(page.url()).search).toBe('');
    await page.close();
  });

  it('resumes after a reload with each text exactly once, and a second tab shows the same transcript', async () => {
    const page = await browser.newPage();
    await page.goto(`${stack.url}/`);
    await page.fill('#prompt', PROMPT);
    await page.selectOption('#harness', 'demo');
    await page.click('#advanced summary');
    await page.fill('#harness-options', JSON.stringify(HARNESS_OPTIONS));
    await page.click('#start');
    await page.waitForURL(/\?run=run_[0-9a-f]{32}$/);
    const runId = new URL(page.url()).searchParams.get('run')!;

    await page.waitForFunction(() => Number(document.querySelector<HTMLElement>('#seq')?.dataset.seq) > 40, null, { timeout: RUN_DONE_MS });
    await page.reload();
    // Restored from sessionStorage before any frame arrives, so the tail resumes rather than replays.
    expect(await shownSeq(page)).toBeGreaterThan(20);
    const midRun = parseRunView(await (await fetch(`${stack.url}/runs/${runId}`)).json());
    expect(midRun.status).toBe('running');

    await waitForStatus(page, 'completed');
    // The status can come from GET /runs/:id before the tail has rendered the rest: the tail's end is its closed state.
    await page.waitForSelector('#conn[data-state="closed"]', { timeout: RUN_DONE_MS });
    const truth = await runText(stack.url, runId);
    expect(truth.record.status).toBe('completed');
    expect(truth.messages).toHaveLength(2);
    expect(await shownMessages(page)).toEqual(truth.messages);
    expect(await shownSeq(page)).toBe(truth.record.lastSeq);

    const card = page.locator('.tool-card');
    expect(await card.count()).toBe(1);
    await expect(card.locator('.tool-name').textContent()).resolves.toBe('count_words');
    expect(JSON.parse((await card.locator('.tool-args').textContent())!)).toEqual({ text: PROMPT });
    expect(JSON.parse((await card.locator('.tool-result').textContent())!)).toEqual({ words: 3 });
    await expect(page.locator('.reasoning-text').textContent()).resolves.toContain('The prompt has 3 words.');

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.setViewportSize({ width: 1180, height: 1120 });
    await page.click('.reasoning summary');
    await page.screenshot({ path: join(ARTIFACTS, 'demo-page.png'), animations: 'disabled' });

    const second = await browser.newPage();
    await second.emulateMedia({ colorScheme: 'dark' });
    await second.goto(`${stack.url}/?run=${runId}`);
    await waitForStatus(second, 'completed');
    await second.waitForSelector('#conn[data-state="closed"]', { timeout: RUN_DONE_MS });
    expect(await shownMessages(second)).toEqual(truth.messages);
    expect(await second.locator('.tool-card').count()).toBe(1);
    await second.waitForSelector('#conn[data-state="closed"]');
    await second.screenshot({ path: join(ARTIFACTS, 'demo-page-dark.png'), animations: 'disabled' });
    await second.close();
    await page.close();
  });
});
