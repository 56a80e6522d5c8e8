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
 * resumes with every text exactly once, as a second tab also shows; then a
 * conversation of two turns, whole again after a reload.
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
    if (!('chunk' in frame)) continue;
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

/**
 * The page shows all it will: the latest turn has `status`, and no tail is
 * open (its tail closed after the status frame, or the thread had no active
 * run, read only from its transcript). The status alone can come from
 * GET /runs/:id before the tail has rendered the rest.
 */
async function waitForSettled(page: Page, status: string): Promise<void> {
  await waitForStatus(page, status);
  await page.waitForSelector('#conn:is([data-state="closed"], [data-state="idle"])', { timeout: RUN_DONE_MS });
}

const shownPrompts = (page: Page) => page.$$eval('.msg.user .msg-text', (nodes) => nodes.map((node) => node.textContent));
const shownRunId = (page: Page) => page.$eval('#run-id', (node) => node.textContent ?? '');

/** Starts a turn from the composer and returns its run id (the header shows it once POST /runs answered). */
async function sendPrompt(page: Page, prompt: string, harnessOptions: object): Promise<string> {
  const before = await shownRunId(page);
  await page.fill('#prompt', prompt);
  await page.selectOption('#harness', 'demo');
  if (!(await page.$eval('#advanced', (node) => (node as HTMLDetailsElement).open))) await page.click('#advanced summary');
  await page.fill('#harness-options', JSON.stringify(harnessOptions));
  await page.click('#start');
  await page.waitForFunction((old) => /^run_[0-9a-f]{32}$/.test(document.querySelector('#run-id')?.textContent ?? '') && document.querySelector('#run-id')?.textContent !== old, before);
  return shownRunId(page);
}

/** GET /threads/:id until its last run has been folded into the transcript (the thread has no active run). */
async function waitThreadIdle(url: string, threadId: string): Promise<{ activeRunId: string | null; runs: RunView[] }> {
  for (let i = 0; i < 500; i++) {
    const summary = (await (await fetch(`${url}/threads/${threadId}`)).json()) as { activeRunId: string | null; runs: RunView[] };
    if (summary.activeRunId === null) return summary;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`thread ${threadId} never settled`);
}

async function getJsonRecord(url: string, runId: string): Promise<RunView> {
  return parseRunView(await (await fetch(`${url}/runs/${runId}`)).json());
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
    mkdirSync(ARTIFACTS, { recursive: true });
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
    // The approvals box asks for approve cards, which only claude-code's permission prompts give.
    await page.fill('#harness-options', '');
    await page.check('#approvals');
    await page.click('#start');
    await page.waitForFunction(() => document.querySelector('#error')?.textContent?.includes('approvals'));
    await expect(page.locator('#error').textContent()).resolves.toContain('approvals are for claude-code');
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
    // The URL names the conversation; its first run names the thread.
    await page.waitForURL(/\?thread=run_[0-9a-f]{32}$/);
    const runId = new URL(page.url()).searchParams.get('thread')!;
    expect(await shownRunId(page)).toBe(runId);

    await page.waitForFunction(() => Number(document.querySelector<HTMLElement>('#seq')?.dataset.seq) > 40, null, { timeout: RUN_DONE_MS });
    await page.reload();
    // Restored from sessionStorage before any frame arrives, so the tail resumes rather than replays.
    expect(await shownSeq(page)).toBeGreaterThan(20);
    const midRun = parseRunView(await (await fetch(`${stack.url}/runs/${runId}`)).json());
    expect(midRun.status).toBe('running');

    await waitForSettled(page, 'completed');
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

    await page.setViewportSize({ width: 1180, height: 1120 });
    await page.click('.reasoning summary');
    await page.screenshot({ path: join(ARTIFACTS, 'demo-page.png'), animations: 'disabled' });

    // A link to the run (what the page's URL was before conversations) opens its conversation.
    await waitThreadIdle(stack.url, runId);
    const second = await browser.newPage();
    await second.emulateMedia({ colorScheme: 'dark' });
    await second.goto(`${stack.url}/?run=${runId}`);
    await second.waitForURL(`${stack.url}/?thread=${runId}`);
    await second.waitForSelector('.turn.history');
    await waitForSettled(second, 'completed');
    expect(await shownMessages(second)).toEqual(truth.messages);
    expect(await shownPrompts(second)).toEqual([PROMPT]);
    expect(await second.locator('.tool-card').count()).toBe(1);
    await second.screenshot({ path: join(ARTIFACTS, 'demo-page-dark.png'), animations: 'disabled' });
    await second.close();
    await page.close();
  });

  it('continues the conversation with a follow-up prompt, and shows both turns after a reload', async () => {
    const options = { chunks: 6, delayMs: 5 };
    const page = await browser.newPage();
    await page.goto(`${stack.url}/`);
    const first = await sendPrompt(page, 'What is a thread', options);
    await page.waitForURL(`${stack.url}/?thread=${first}`);
    await waitForSettled(page, 'completed');

    // Another tab, idle on the same conversation, picks up the turn this one starts.
    const other = await browser.newPage();
    await other.goto(`${stack.url}/?thread=${first}`);
    await other.waitForSelector('.turn.history');
    await waitForSettled(other, 'completed');

    const second = await sendPrompt(page, 'And a follow-up turn', options);
    expect(second).not.toBe(first);
    await waitForSettled(page, 'completed');
    expect(new URL(page.url()).searchParams.get('thread')).toBe(first);
    // The turn is over before the idle tab next asks (it asks every 3 s): it shows it from the transcript.
    await waitThreadIdle(stack.url, first);
    await other.waitForFunction((runId) => document.querySelector('#run-id')?.textContent === runId, second);
    await waitForSettled(other, 'completed');
    expect(await shownPrompts(other)).toEqual(['What is a thread', 'And a follow-up turn']);
    await other.close();

    // The relay's side: one thread, two turns, the second sent with its threadId.
    const summary = await waitThreadIdle(stack.url, first);
    expect(summary.runs.map((run) => [run.runId, run.status])).toEqual([
      [first, 'completed'],
      [second, 'completed'],
    ]);
    expect((await getJsonRecord(stack.url, second)).threadId).toBe(first);
    const truth = [...(await runText(stack.url, first)).messages, ...(await runText(stack.url, second)).messages];
    expect(truth).toHaveLength(4);
    expect(await shownMessages(page)).toEqual(truth);
    expect(await shownPrompts(page)).toEqual(['What is a thread', 'And a follow-up turn']);

    // After a reload the finished turns come from the thread's transcript: the same texts under the same ids.
    await page.reload();
    await page.waitForSelector('.turn.history');
    await waitForSettled(page, 'completed');
    expect(await shownPrompts(page)).toEqual(['What is a thread', 'And a follow-up turn']);
    expect(await shownMessages(page)).toEqual(truth);
    expect(await page.locator('.tool-card[data-state="done"]').count()).toBe(2);
    expect(await shownRunId(page)).toBe(second);

    // The next prompt from the reloaded page is the third turn of the same thread.
    const third = await sendPrompt(page, 'One more', options);
    await waitForSettled(page, 'completed');
    expect((await getJsonRecord(stack.url, third)).threadId).toBe(first);
    expect(await shownPrompts(page)).toEqual(['What is a thread', 'And a follow-up turn', 'One more']);

    // "New conversation" starts a fresh thread.
    await page.click('#new-conversation');
    await page.waitForURL(`${stack.url}/`);
    expect(await page.locator('.msg').count()).toBe(0);
    const fresh = await sendPrompt(page, 'Another subject', options);
    await page.waitForURL(`${stack.url}/?thread=${fresh}`);
    await waitForSettled(page, 'completed');
    expect(await shownPrompts(page)).toEqual(['Another subject']);
    await page.close();
  });

  it('shows a client tool call as a card in every tab: the first answer wins, both tabs resolve, the run completes', async () => {
    const tools = [
      { name: 'approve', description: 'Ask a person to allow a harness action.', inputSchema: { type: 'object' }, execute: { type: 'client' } },
      { name: 'pick_color', description: 'Ask a person for a color.', inputSchema: { type: 'object', properties: { choices: { type: 'array' } } }, execute: { type: 'client' } },
    ];
    // The demo calls them in order, each once the one before has its answer; the last keeps the run waiting while the second is answered twice.
    const toolCalls = [
      { name: 'approve', input: { tool: 'Bash', input: { command: 'ls' } } },
      { name: 'pick_color', input: { choices: ['red', 'blue'] } },
      { name: 'approve', input: { tool: 'Write', input: { path: 'notes.md' } } },
    ];
    const page = await browser.newPage();
    await page.goto(`${stack.url}/`);
    await page.click('#advanced summary');
    await page.fill('#tools', JSON.stringify(tools));
    const runId = await sendPrompt(page, 'Ask before you act', { chunks: 3, delayMs: 5, toolCalls });
    const answer = (p: Page, name: string) => p.locator(`.tool-card:has(.tool-name:text-is("${name}")) .tool-answer`);

    // The run waits on a person, with the call on its record; a second tab on the conversation shows the same card.
    await answer(page, 'approve').waitFor();
    const waiting = parseRunView(await (await fetch(`${stack.url}/runs/${runId}`)).json());
    expect(waiting.status).toBe('running');
    expect(waiting.pendingToolCalls?.map((call) => [call.name, call.input])).toEqual([['approve', toolCalls[0]!.input]]);
    const approveId = waiting.pendingToolCalls![0]!.toolCallId;
    await expect(answer(page, 'approve').getAttribute('data-answer-for')).resolves.toBe(approveId);
    await expect(answer(page, 'approve').locator('code').textContent()).resolves.toBe('Bash');
    await page.screenshot({ path: join(ARTIFACTS, 'demo-page-approval.png'), animations: 'disabled' });

    const second = await browser.newPage();
    // The second tab's tail goes through here, so the test can hold what the relay sends it.
    let holding = false;
    const held: (string | Buffer)[] = [];
    let toPage: ((message: string | Buffer) => void) | undefined;
    await second.routeWebSocket(/\/runs\/[^/]+\/ws/, (ws) => {
      const server = ws.connectToServer();
      toPage = (message) => ws.send(message);
      server.onMessage((message) => (holding ? held.push(message) : ws.send(message)));
    });
    await second.goto(`${stack.url}/?thread=${new URL(page.url()).searchParams.get('thread')}`);
    await answer(second, 'approve').waitFor();
    // A tab that joins mid-turn shows the turn's prompt too (GET /threads/:id's activeTurn).
    expect(await shownPrompts(second)).toEqual(['Ask before you act']);

    // Approve in the first tab: the card resolves there and, on the call's TOOL_CALL_RESULT, in the second.
    await answer(page, 'approve').locator('button[data-behavior="allow"]').click();
    await answer(page, 'approve').waitFor({ state: 'detached' });
    await answer(second, 'approve').waitFor({ state: 'detached' });
    const approveResult = (p: Page) => p.locator(`.tool-card[data-tool-call-id="${approveId}"] .tool-result`);
    await second.locator(`.tool-card[data-tool-call-id="${approveId}"][data-state="done"]`).waitFor();
    expect(JSON.parse((await approveResult(second).textContent())!)).toEqual({ behavior: 'allow' });

    // The next call: the second tab hears nothing more, so it still offers its form after the first tab answered.
    await answer(page, 'pick_color').waitFor();
    await answer(second, 'pick_color').waitFor();
    holding = true;
    await answer(page, 'pick_color').locator('textarea').fill('{"color": "red"}');
    await answer(page, 'pick_color').locator('button[type="submit"]').click();
    await answer(page, 'pick_color').waitFor({ state: 'detached' });
    await expect(answer(second, 'pick_color').count()).resolves.toBe(1);
    // Its answer comes second: 409 already_answered, and the card goes away without an error.
    await answer(second, 'pick_color').locator('textarea').fill('{"color": "blue"}');
    const refused = second.waitForResponse((res) => res.url().includes(`/runs/${runId}/tool-results`));
    await answer(second, 'pick_color').locator('button[type="submit"]').click();
    expect((await refused).status()).toBe(409);
    expect(await (await refused).json()).toMatchObject({ error: { code: 'already_answered' } });
    await answer(second, 'pick_color').waitFor({ state: 'detached' });
    await expect(second.locator('#error').isHidden()).resolves.toBe(true);

    // What the second tab missed arrives: the first tab's answer is the call's result there too.
    holding = false;
    for (const message of held.splice(0)) toPage!(message);
    const colorResult = (p: Page) => p.locator('.tool-card:has(.tool-name:text-is("pick_color")) .tool-result');
    await second.locator('.tool-card:has(.tool-name:text-is("pick_color"))[data-state="done"]').waitFor();
    expect(JSON.parse((await colorResult(second).textContent())!)).toEqual({ color: 'red' });

    // The last call, denied from the second tab: the first tab's card resolves. Reloaded first, that tab resumes
    // past the call's request, so its card comes from the record's pendingToolCalls.
    await answer(second, 'approve').waitFor();
    await answer(page, 'approve').waitFor();
    await page.reload();
    await answer(page, 'approve').waitFor();
    await expect(answer(page, 'approve').locator('code').textContent()).resolves.toBe('Write');
    await expect(answer(second, 'approve').locator('code').textContent()).resolves.toBe('Write');
    await answer(second, 'approve').locator('button[data-behavior="deny"]').click();
    await answer(page, 'approve').waitFor({ state: 'detached' });
    for (const p of [page, second]) {
      await waitForSettled(p, 'completed');
      expect(await p.locator('.tool-answer').count()).toBe(0);
      const results = await p.locator('.tool-card:has(.tool-name:text-is("approve")) .tool-result').allTextContents();
      expect(results.map((text) => JSON.parse(text) as unknown)).toEqual([{ behavior: 'allow' }, { behavior: 'deny' }]);
      expect(JSON.parse((await colorResult(p).textContent())!)).toEqual({ color: 'red' });
    }
    const done = parseRunView(await (await fetch(`${stack.url}/runs/${runId}`)).json());
    expect(done.pendingToolCalls ?? []).toEqual([]);
    await second.close();
    await page.close();
  });
});
