import { attachRun, applyChunk, emptyTranscript, HARNESS_NAMES, parseTranscript, RunNotFoundError } from '/assets/client.js';
import { TranscriptView } from '/render.js';

/**
 * The demo page. Resuming after a reload: each run's transcript and the last
 * seq folded into it are kept together in sessionStorage (one JSON value, so
 * they always agree), and the tail re-attaches with `fromSeq` = that seq. The
 * client SDK drops anything at or below it, so every text shows exactly once.
 * A new tab has an empty sessionStorage and replays the run from the start.
 */

const $ = (id) => document.getElementById(id);
const STORE_PREFIX = 'harness-relay:run:';
/** Saving the whole transcript on every chunk is quadratic; a quarter second loses nothing that a replay cannot restore. */
const SAVE_EVERY_MS = 250;
const TERMINAL = new Set(['completed', 'failed', 'aborted']);

const view = new TranscriptView($('transcript'), $('scroller'));
/** @type {null | {runId: string, transcript: object, prompt: string | null, token?: string, status: string, tail?: object, saveTimer?: number}} */
let current = null;

for (const name of HARNESS_NAMES) $('harness').append(new Option(name, name, name === 'demo', name === 'demo'));

function showError(message) {
  $('error').textContent = message;
  $('error').hidden = message === '';
}

function authHeaders() {
  const token = $('api-token').value.trim();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** The API's own words for a failed request: `{"error": {"message"}}`, else the HTTP status. */
async function apiError(res) {
  const body = await res.json().catch(() => null);
  return body?.error?.message ?? `The relay answered HTTP ${res.status}.`;
}

function setStatus(status) {
  current.status = status;
  $('status').textContent = status;
  $('status').dataset.status = status;
  $('cancel').hidden = status !== 'running';
  $('cancel').disabled = false;
}

function setConnection(state) {
  $('conn').dataset.state = state;
  $('conn-label').textContent = state;
}

function setSeq(seq) {
  $('seq').textContent = seq < 0 ? '–' : String(seq);
  $('seq').dataset.seq = String(seq);
}

function load(runId) {
  try {
    const saved = JSON.parse(sessionStorage.getItem(STORE_PREFIX + runId) ?? 'null');
    const transcript = parseTranscript(saved?.transcript);
    if (!transcript) return null;
    return { transcript, prompt: typeof saved.prompt === 'string' ? saved.prompt : null, token: typeof saved.token === 'string' ? saved.token : undefined };
  } catch {
    return null;
  }
}

function save(run) {
  clearTimeout(run.saveTimer);
  run.saveTimer = undefined;
  try {
    sessionStorage.setItem(STORE_PREFIX + run.runId, JSON.stringify({ transcript: run.transcript, prompt: run.prompt, token: run.token }));
  } catch {
    // Quota: the last saved copy is older but consistent; a reload replays the difference.
  }
}

function scheduleSave(run) {
  run.saveTimer ??= setTimeout(() => save(run), SAVE_EVERY_MS);
}

/** Shows run `runId` and tails it from the last seq this tab rendered. */
function openRun(runId, known = {}) {
  if (current) {
    current.tail?.close();
    save(current);
  }
  const saved = load(runId);
  const run = {
    runId,
    transcript: saved?.transcript ?? emptyTranscript(),
    prompt: known.prompt ?? saved?.prompt ?? null,
    token: known.token ?? saved?.token,
    status: 'running',
  };
  current = run;
  view.clear();
  $('intro').hidden = true;
  $('run-info').hidden = false;
  $('new-run').hidden = false;
  $('run-id').textContent = runId;
  document.title = `${runId.slice(0, 12)}… · harness-relay`;
  setStatus(known.status ?? '…');
  setSeq(run.transcript.lastSeq);
  if (run.prompt) view.showPrompt(run.prompt);
  view.renderAll(run.transcript);

  if (!known.status) {
    const query = run.token ? `?token=${encodeURIComponent(run.token)}` : '';
    fetch(`/runs/${encodeURIComponent(runId)}${query}`, { headers: authHeaders() })
      .then((res) => (res.ok ? res.json() : null))
      .then((record) => {
        if (record && current === run && !TERMINAL.has(run.status)) setStatus(record.status);
      })
      .catch(() => {});
  }

  run.tail = attachRun({
    baseUrl: location.origin,
    runId,
    fromSeq: run.transcript.lastSeq,
    token: run.token,
    onChunk(chunk, seq) {
      const at = applyChunk(run.transcript, chunk, seq);
      if (at >= 0) view.update(run.transcript.items[at]);
      setSeq(seq);
      scheduleSave(run);
    },
    onStatus(record) {
      setStatus(record.status);
      view.settle();
      view.showEnd(record);
      save(run);
    },
    onState(state) {
      if (current === run) setConnection(state);
    },
  });
  run.tail.done.catch((error) => {
    if (current !== run || error?.name === 'AbortError') return;
    if (error instanceof RunNotFoundError) {
      setStatus('not found');
      showError(`${error.message} Start a new run below.`);
    } else {
      showError(`Lost the run's stream: ${error?.message ?? error}`);
    }
  });
}

async function startRun(event) {
  event.preventDefault();
  showError('');
  const prompt = $('prompt').value.trim();
  if (prompt === '') return showError('Write a prompt first.');
  const body = { prompt, harness: $('harness').value };
  const model = $('model').value.trim();
  if (model) body.model = model;
  const rawOptions = $('harness-options').value.trim();
  if (rawOptions) {
    try {
      body.harnessOptions = JSON.parse(rawOptions);
    } catch (error) {
      $('advanced').open = true;
      return showError(`harnessOptions is not valid JSON: ${error.message}`);
    }
  }
  $('start').disabled = true;
  try {
    const res = await fetch('/runs', { method: 'POST', headers: { 'content-type': 'application/json', ...authHeaders() }, body: JSON.stringify(body) });
    if (!res.ok) return showError(await apiError(res));
    const record = await res.json();
    history.pushState({ runId: record.runId }, '', `/?run=${encodeURIComponent(record.runId)}`);
    $('prompt').value = '';
    $('advanced').open = false;
    openRun(record.runId, { prompt, token: record.attachToken, status: record.status });
  } catch (error) {
    showError(`Could not reach the relay: ${error.message}`);
  } finally {
    $('start').disabled = false;
  }
}

async function cancelRun() {
  if (!current) return;
  const run = current;
  $('cancel').disabled = true;
  try {
    const res = await fetch(`/runs/${encodeURIComponent(run.runId)}/cancel`, { method: 'POST', headers: authHeaders() });
    if (!res.ok) {
      showError(await apiError(res));
      $('cancel').disabled = false;
    }
  } catch (error) {
    showError(`Could not reach the relay: ${error.message}`);
    $('cancel').disabled = false;
  }
}

function showHome() {
  if (current) {
    current.tail?.close();
    save(current);
    current = null;
  }
  view.clear();
  document.title = 'harness-relay';
  $('intro').hidden = false;
  $('run-info').hidden = true;
  $('cancel').hidden = true;
  $('new-run').hidden = true;
  $('prompt').focus();
}

function route() {
  showError('');
  const runId = new URLSearchParams(location.search).get('run');
  if (runId) openRun(runId);
  else showHome();
}

$('composer').addEventListener('submit', startRun);
$('prompt').addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) $('composer').requestSubmit();
});
$('cancel').addEventListener('click', cancelRun);
window.addEventListener('popstate', route);
window.addEventListener('pagehide', () => current && save(current));
route();
