import { attachRun, applyChunk, emptyTranscript, HARNESS_NAMES, parseTranscript, RunNotFoundError, ToolAnswerError, transcriptFromMessages } from '/assets/client.js';
import { TranscriptView } from '/render.js';
import { ToolAnswers } from '/tool-answers.js';

/**
 * The demo page: a conversation (a thread), one run per turn. The URL names
 * the thread (`/?thread=<id>`); a link to one run (`/?run=<id>`) opens that
 * run's thread. A prompt after a turn ends is the thread's next turn.
 *
 * A reload shows the finished turns from `GET /threads/:id/messages` and
 * tails the thread's active run. Resuming that tail: each run's transcript
 * and the last seq folded into it are kept together in sessionStorage (one
 * JSON value, so they always agree), and the tail re-attaches with `fromSeq`
 * = that seq; the client SDK drops anything at or below it, so every text
 * shows exactly once. The tab also remembers which run of the thread it was
 * following, so that run is back on screen before any request is answered.
 * A new tab has an empty sessionStorage and replays the active run from the start.
 */

const $ = (id) => document.getElementById(id);
const RUN_PREFIX = 'harness-relay:run:';
const THREAD_PREFIX = 'harness-relay:thread:';
/** Saving the whole transcript on every chunk is quadratic; a quarter second loses nothing that a replay cannot restore. */
const SAVE_EVERY_MS = 250;
const TERMINAL = new Set(['completed', 'failed', 'aborted']);
/** Reading a thread is three requests; a turn that ends in between makes the read start over, this many times at most. */
const THREAD_READ_TRIES = 3;

const view = new TranscriptView($('transcript'), $('scroller'));
/** @type {null | {threadId: string, loading: boolean}} */
let thread = null;
/**
 * The run this tab tails: the thread's active turn, or the last one it followed.
 * @type {null | {runId: string, transcript: object, prompt: string | null, token?: string, status: string | null, turn: import('/render.js').TurnView, answers: ToolAnswers, tail?: object, saveTimer?: number}}
 */
let current = null;
let posting = false;
/** The page could not read what its URL names without the API token: it reads it again once one is typed. */
let awaitingToken = false;

for (const name of HARNESS_NAMES) $('harness').append(new Option(name, name, name === 'demo', name === 'demo'));

function showError(message) {
  $('error').textContent = message;
  $('error').hidden = message === '';
}

function authHeaders() {
  const token = $('api-token').value.trim();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** The API's own words for a failed request: `{"error": {"code", "message"}}`, else the HTTP status. */
async function apiError(res) {
  const body = await res.json().catch(() => null);
  return { status: res.status, code: body?.error?.code, message: body?.error?.message ?? `The relay answered HTTP ${res.status}.` };
}

/** `GET /runs/:id` takes the run's attach token when the tab holds one (the API token, if typed, decides anyway). */
function recordPath(run) {
  const query = run.token ? `?token=${encodeURIComponent(run.token)}` : '';
  return `/runs/${encodeURIComponent(run.runId)}${query}`;
}

function showStatus(status) {
  $('status').textContent = status;
  $('status').dataset.status = status;
  $('cancel').hidden = !(current && current.status === 'running');
  $('cancel').disabled = false;
  refreshComposer();
}

function setRunStatus(run, status) {
  run.status = status;
  if (current === run) showStatus(status);
}

/** One turn at a time: the thread refuses a second (409 thread_busy), so the page does not offer it. */
function refreshComposer() {
  $('start').disabled = posting || Boolean(thread?.loading) || current?.status === 'running';
  $('start').textContent = thread ? 'Send' : 'Start';
}

/** The latest turn's run; not repeated when it is the run the thread is named after. */
function showRunId(runId) {
  $('run-id').textContent = runId;
  $('run-id').hidden = runId === '' || runId === thread?.threadId;
}

function setConnection(state) {
  $('conn').dataset.state = state;
  $('conn-label').textContent = state;
}

function setSeq(seq) {
  $('seq').textContent = seq < 0 ? '–' : String(seq);
  $('seq').dataset.seq = String(seq);
}

function readJson(key) {
  try {
    return JSON.parse(sessionStorage.getItem(key) ?? 'null');
  } catch {
    return null;
  }
}

function writeJson(key, value) {
  try {
    sessionStorage.setItem(key, JSON.stringify(value));
  } catch {
    // Quota: the last saved copy is older but consistent; a reload replays the difference.
  }
}

function load(runId) {
  const saved = readJson(RUN_PREFIX + runId);
  const transcript = parseTranscript(saved?.transcript);
  if (!transcript) return null;
  return { transcript, prompt: typeof saved.prompt === 'string' ? saved.prompt : null, token: typeof saved.token === 'string' ? saved.token : undefined };
}

function save(run) {
  clearTimeout(run.saveTimer);
  run.saveTimer = undefined;
  writeJson(RUN_PREFIX + run.runId, { transcript: run.transcript, prompt: run.prompt, token: run.token });
}

function scheduleSave(run) {
  run.saveTimer ??= setTimeout(() => save(run), SAVE_EVERY_MS);
}

function rememberRun(threadId, runId) {
  writeJson(THREAD_PREFIX + threadId, { runId });
}

function rememberedRun(threadId) {
  const runId = readJson(THREAD_PREFIX + threadId)?.runId;
  return typeof runId === 'string' ? runId : null;
}

/** Stops tailing the current run; its turn stays on the page. */
function closeCurrent() {
  if (!current) return;
  current.tail?.close();
  save(current);
  current = null;
}

function showConversation(threadId) {
  $('intro').hidden = true;
  $('run-info').hidden = false;
  $('new-conversation').hidden = false;
  $('thread-id').textContent = threadId;
  document.title = `${threadId.slice(0, 12)}… · harness-relay`;
}

/** The SDK's requests (the record, tool answers) carry the API token when one is typed; the run's attach token rides as `?token=`. */
function fetchWithApiToken(url, init = {}) {
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(authHeaders())) headers.set(name, value);
  return fetch(url, { ...init, headers });
}

/** The run's status before its tail has said anything (a run this tab did not just start). */
function readStatus(run) {
  fetch(recordPath(run), { headers: authHeaders() })
    .then((res) => (res.ok ? res.json() : null))
    .then((record) => {
      if (record && !TERMINAL.has(run.status)) setRunStatus(run, record.status);
    })
    .catch(() => {});
}

/** Answers a client tool call through the tail (`POST /runs/:id/tool-results`): `{ok}` or the relay's `{status, code, message}`. */
async function sendToolResult(run, toolCallId, output) {
  try {
    await run.tail.respond(toolCallId, output);
    return { ok: true, status: 200 };
  } catch (error) {
    if (error instanceof ToolAnswerError) return { ok: false, status: error.status, code: error.code, message: error.message };
    throw error;
  }
}

function onChunk(run, chunk, seq) {
  const at = applyChunk(run.transcript, chunk, seq);
  if (at >= 0) run.turn.update(run.transcript.items[at]);
  // The call was answered, here or in another tab: every tab's card resolves on this chunk.
  if (chunk.type === 'TOOL_CALL_RESULT' && typeof chunk.toolCallId === 'string') run.answers.resolve(chunk.toolCallId);
  if (current === run) setSeq(seq);
  scheduleSave(run);
}

/**
 * Shows run `runId` as the thread's latest turn and tails it from the last
 * seq this tab rendered. `known`: what `POST /runs` just answered.
 */
function followRun(runId, known = {}) {
  const saved = load(runId);
  const turn = view.addTurn();
  turn.node.dataset.runId = runId;
  const run = {
    runId,
    transcript: saved?.transcript ?? emptyTranscript(),
    prompt: known.prompt ?? saved?.prompt ?? null,
    token: known.token ?? saved?.token,
    status: known.status ?? null,
    turn,
  };
  const hasResult = (id) => run.transcript.items.some((item) => item.kind === 'tool' && item.id === id && item.result !== null);
  run.answers = new ToolAnswers({ turn, hasResult, send: (id, output) => sendToolResult(run, id, output) });
  current = run;
  if (thread) rememberRun(thread.threadId, runId);
  showRunId(runId);
  showStatus(run.status ?? '…');
  setSeq(run.transcript.lastSeq);
  if (run.prompt) turn.showPrompt(run.prompt);
  turn.renderAll(run.transcript);
  if (!known.status) readStatus(run);

  run.tail = attachRun({
    baseUrl: location.origin,
    runId,
    fromSeq: run.transcript.lastSeq,
    token: run.token,
    fetchImpl: fetchWithApiToken,
    onChunk: (chunk, seq) => onChunk(run, chunk, seq),
    // The SDK knows which calls wait for a person: those its chunks mark `client`, and the record's `pendingToolCalls`.
    onPendingToolCalls: (calls) => run.answers.sync(calls),
    onStatus(record) {
      run.answers.clear();
      turn.settle();
      turn.showEnd(record);
      setRunStatus(run, record.status);
      save(run);
    },
    onState(state) {
      if (current === run) setConnection(state);
    },
  });
  run.tail.done.catch((error) => {
    if (current !== run || error?.name === 'AbortError') return;
    if (error instanceof RunNotFoundError) {
      setRunStatus(run, 'not found');
      showError(`${error.message} Start a new conversation.`);
    } else {
      showError(`Lost the run's stream: ${error?.message ?? error}`);
    }
  });
}

function askForToken(message) {
  awaitingToken = true;
  $('advanced').open = true;
  showError(message);
}

async function getJson(path) {
  const res = await fetch(path, { headers: authHeaders() });
  if (!res.ok) throw Object.assign(new Error(), await apiError(res));
  return res.json();
}

/**
 * The thread's runs and transcript, as one consistent picture: the
 * transcript gains a turn only when the active run ends, and that changes the
 * summary, so equal summaries read before and after it agree with it.
 */
async function readThread(threadId) {
  const path = `/threads/${encodeURIComponent(threadId)}`;
  for (let attempt = 1; ; attempt++) {
    const before = await getJson(path);
    const { messages } = await getJson(`${path}/messages`);
    const after = await getJson(path);
    const same = before.activeRunId === after.activeRunId && before.runs?.length === after.runs?.length;
    if (same || attempt === THREAD_READ_TRIES) return { summary: after, messages };
  }
}

/** The text of the last user message of a turn (`GET /threads/:id`'s `activeTurn`), or `null`. */
function promptOf(turn) {
  const messages = Array.isArray(turn?.messages) ? turn.messages : [];
  const user = messages.filter((message) => message?.role === 'user').at(-1);
  if (typeof user?.content === 'string') return user.content;
  const parts = Array.isArray(user?.content) ? user.content.filter((part) => typeof part?.content === 'string').map((part) => part.content) : [];
  return parts.length > 0 ? parts.join(' ') : null;
}

/** Conversation `threadId`: finished turns from its transcript, then its active run, live. */
function openThread(threadId) {
  closeCurrent();
  view.clear();
  showError('');
  thread = { threadId, loading: true };
  showConversation(threadId);
  const known = rememberedRun(threadId);
  if (known) followRun(known);
  else {
    showRunId('');
    setSeq(-1);
    setConnection('idle');
    showStatus('…');
  }
  void loadThread(thread);
}

async function loadThread(t) {
  let snapshot;
  try {
    snapshot = await readThread(t.threadId);
  } catch (error) {
    if (thread !== t) return;
    t.loading = false;
    refreshComposer();
    if (error.status === 401) {
      // Attach tokens read one run, never a thread: the run this tab knows keeps streaming.
      askForToken('Reading a whole conversation needs the relay\'s API token: enter it under Advanced.');
    } else if (error.status === 404) {
      // A run from before threads existed has none: it is shown on its own.
      if (current) return;
      showStatus('not found');
      showError(`${error.message} Start a new conversation.`);
    } else {
      showError(`Could not load the conversation: ${error.message}`);
    }
    return;
  }
  if (thread !== t) return;
  t.loading = false;
  const { summary, messages } = snapshot;
  t.turns = Array.isArray(summary.runs) ? summary.runs.length : 0;
  const active = typeof summary.activeRunId === 'string' ? summary.activeRunId : null;
  if (current && current.runId !== active) {
    // The run this tab followed has ended: the transcript has its turn now.
    const done = current;
    closeCurrent();
    done.turn.remove();
  }
  const finished = view.addTurn({ first: true });
  finished.node.classList.add('history');
  finished.renderAll(transcriptFromMessages(messages));
  // The running turn's prompt is in no transcript yet: the summary has it for a tab that joins now.
  if (active && !current) followRun(active, { prompt: promptOf(summary.activeTurn) });
  if (!active) {
    const last = Array.isArray(summary.runs) ? summary.runs.at(-1) : undefined;
    if (last) {
      finished.showEnd(last);
      showRunId(last.runId);
      setSeq(typeof last.lastSeq === 'number' ? last.lastSeq : -1);
      showStatus(last.status);
    }
    setConnection('idle');
  }
  refreshComposer();
}

/** `/?run=<id>`: a link to one run opens its conversation. */
async function openLinkedRun(runId) {
  closeCurrent();
  view.clear();
  thread = null;
  $('intro').hidden = true;
  $('run-info').hidden = false;
  $('thread-id').textContent = '';
  showRunId(runId);
  const token = load(runId)?.token;
  try {
    const res = await fetch(recordPath({ runId, token }), { headers: authHeaders() });
    if (res.status === 404) {
      showStatus('not found');
      return showError(`${new RunNotFoundError(runId).message} Start a new conversation.`);
    }
    if (res.status === 401) return askForToken(`${(await apiError(res)).message} Enter it under Advanced.`);
    if (!res.ok) return showError((await apiError(res)).message);
    const record = await res.json();
    rememberRun(record.threadId, runId);
    history.replaceState(null, '', `/?thread=${encodeURIComponent(record.threadId)}`);
    openThread(record.threadId);
  } catch (error) {
    showError(`Could not reach the relay: ${error.message}`);
  }
}

function readRunOptions(body) {
  const fields = [
    ['harness-options', 'harnessOptions', (value) => typeof value === 'object' && value !== null && !Array.isArray(value)],
    ['tools', 'tools', Array.isArray],
  ];
  for (const [id, field, ok] of fields) {
    const raw = $(id).value.trim();
    if (!raw) continue;
    let value;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      $('advanced').open = true;
      throw new Error(`${field} is not valid JSON: ${error.message}`);
    }
    if (!ok(value)) {
      $('advanced').open = true;
      throw new Error(`${field} must be a JSON ${field === 'tools' ? 'array' : 'object'}.`);
    }
    body[field] = value;
  }
}

async function startRun(event) {
  event.preventDefault();
  showError('');
  if (posting || thread?.loading) return;
  if (current?.status === 'running') return showError('This turn is still running: wait for it to end, or cancel it, before the next prompt.');
  const prompt = $('prompt').value.trim();
  if (prompt === '') return showError('Write a prompt first.');
  const body = { prompt, harness: $('harness').value };
  if (thread) body.threadId = thread.threadId;
  const model = $('model').value.trim();
  if (model) body.model = model;
  if ($('approvals').checked) body.approvals = 'client';
  try {
    readRunOptions(body);
  } catch (error) {
    return showError(error.message);
  }
  posting = true;
  refreshComposer();
  try {
    const res = await fetch('/runs', { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders() }, body: JSON.stringify(body) });
    if (!res.ok) {
      const error = await apiError(res);
      // Another tab started this thread's next turn: follow it here too (the prompt stays in the composer).
      if (error.code === 'thread_busy' && thread) openThread(thread.threadId);
      return showError(error.message);
    }
    const record = await res.json();
    $('prompt').value = '';
    $('advanced').open = false;
    if (thread?.threadId !== record.threadId) {
      // The first turn: the relay named the thread (after its first run).
      closeCurrent();
      view.clear();
      thread = { threadId: record.threadId, loading: false };
      history.pushState(null, '', `/?thread=${encodeURIComponent(record.threadId)}`);
      showConversation(record.threadId);
    } else {
      closeCurrent(); // the previous turn stays on the page, above the new one
    }
    // This tab's own turn is not news to it (see the thread poll).
    thread.turns = (thread.turns ?? 0) + 1;
    followRun(record.runId, { prompt, token: record.attachToken, status: record.status });
  } catch (error) {
    showError(`Could not reach the relay: ${error.message}`);
  } finally {
    posting = false;
    refreshComposer();
  }
}

async function cancelRun() {
  if (!current) return;
  const run = current;
  $('cancel').disabled = true;
  try {
    const res = await fetch(`/runs/${encodeURIComponent(run.runId)}/cancel`, { method: 'POST', headers: authHeaders() });
    if (!res.ok) {
      showError((await apiError(res)).message);
      $('cancel').disabled = false;
    }
  } catch (error) {
    showError(`Could not reach the relay: ${error.message}`);
    $('cancel').disabled = false;
  }
}

function showHome() {
  closeCurrent();
  view.clear();
  thread = null;
  document.title = 'harness-relay';
  $('intro').hidden = false;
  $('run-info').hidden = true;
  $('cancel').hidden = true;
  $('new-conversation').hidden = true;
  refreshComposer();
  $('prompt').focus();
}

function route() {
  showError('');
  const params = new URLSearchParams(location.search);
  const threadId = params.get('thread');
  const runId = params.get('run');
  if (threadId) openThread(threadId);
  else if (runId) void openLinkedRun(runId);
  else showHome();
}

$('composer').addEventListener('submit', startRun);
$('prompt').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) $('composer').requestSubmit();
});
$('cancel').addEventListener('click', cancelRun);
$('api-token').addEventListener('change', () => {
  if (!awaitingToken) return;
  awaitingToken = false;
  route();
});
window.addEventListener('popstate', route);

/**
 * Another tab may start the thread's next turn: while this one has no turn
 * running, it asks the thread now and then, and shows a turn it did not know
 * of — running (it follows it) or already over (a short turn can start and
 * end between two asks). Never without the credentials a thread read needs;
 * a hidden tab's timer is slowed down by the browser itself.
 */
const THREAD_POLL_MS = 3_000;
setInterval(async () => {
  const t = thread;
  if (!t || t.loading || posting || awaitingToken || current?.status === 'running') return;
  let summary;
  try {
    summary = await getJson(`/threads/${encodeURIComponent(t.threadId)}`);
  } catch {
    return;
  }
  const active = typeof summary.activeRunId === 'string' ? summary.activeRunId : null;
  const turns = Array.isArray(summary.runs) ? summary.runs.length : 0;
  const news = turns > (t.turns ?? 0) || (active !== null && active !== current?.runId);
  if (thread === t && !posting && !t.loading && news) openThread(t.threadId);
}, THREAD_POLL_MS);
window.addEventListener('pagehide', () => current && save(current));
route();
