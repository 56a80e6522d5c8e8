/**
 * Draws a transcript (see src/client/transcript.ts) into the page. Each item
 * gets one element, created on first sight and updated in place afterwards, so
 * a chunk costs one small DOM write and a reader's open/closed reasoning
 * panel survives the stream.
 */

/** @param {string} tag @param {string} [className] @param {string} [text] */
export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

/** Arguments and results are JSON text: indented when they parse, as-is when they do not (still streaming). */
export function pretty(text) {
  if (text === null || text === '') return '';
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

function createText(item) {
  const node = el('article', `msg ${item.role === 'user' ? 'user' : 'assistant'}`);
  node.dataset.messageId = item.id;
  node.append(el('div', 'avatar', item.role === 'user' ? 'You' : 'AI'));
  const bubble = el('div', 'bubble');
  bubble.append(el('div', 'msg-text'));
  node.append(bubble);
  return node;
}

function updateText(node, item) {
  node.querySelector('.msg-text').textContent = item.text;
  node.classList.toggle('streaming', item.streaming);
}

function createReasoning(item) {
  const node = el('details', 'reasoning');
  node.dataset.reasoningId = item.id;
  node.append(el('summary'), el('div', 'reasoning-text'));
  return node;
}

function updateReasoning(node, item) {
  node.querySelector('summary').textContent = item.streaming ? 'Thinking…' : 'Reasoning';
  node.querySelector('.reasoning-text').textContent = item.text;
}

function createTool(item) {
  const node = el('section', 'tool-card');
  node.dataset.toolCallId = item.id;
  const header = el('header');
  header.append(el('span', 'tool-icon', '⚙'), el('span', 'tool-name'), el('span', 'pill tool-state'));
  const args = el('div', 'tool-section');
  args.append(el('div', 'label', 'Arguments'), el('pre', 'tool-args'));
  const result = el('div', 'tool-section tool-result-section');
  result.append(el('div', 'label', 'Result'), el('pre', 'tool-result'));
  node.append(header, args, result);
  return node;
}

/** A call with an answer form in it (see tool-answers.js) waits on a person, not on the harness. */
function updateTool(node, item) {
  const awaiting = item.result === null && node.querySelector('.tool-answer') !== null;
  node.dataset.state = item.result !== null ? 'done' : awaiting ? 'awaiting' : 'running';
  node.querySelector('.tool-name').textContent = item.name;
  node.querySelector('.tool-state').textContent = item.result !== null ? 'done' : awaiting ? 'needs your answer' : item.streaming ? 'calling…' : 'waiting for result';
  node.querySelector('.tool-args').textContent = pretty(item.args) || '{}';
  node.querySelector('.tool-result-section').hidden = item.result === null;
  node.querySelector('.tool-result').textContent = pretty(item.result);
}

function createError(item) {
  const node = el('div', 'error-card');
  node.setAttribute('role', 'alert');
  return node;
}

function updateError(node, item) {
  node.replaceChildren(el('strong', '', 'Run error: '), document.createTextNode(item.message));
  if (item.code) node.append(el('code', '', item.code));
}

const VIEWS = {
  text: [createText, updateText],
  reasoning: [createReasoning, updateReasoning],
  tool: [createTool, updateTool],
  error: [createError, updateError],
};

/**
 * One turn of the conversation (a run, or the finished turns read back from
 * the thread), in its own section: items of different turns never share an
 * element even when two harness runs reuse an id.
 */
export class TurnView {
  /** @param {TranscriptView} view @param {HTMLElement} node */
  constructor(view, node) {
    this.view = view;
    this.node = node;
    /** @type {HTMLElement | null} */
    this.end = null;
    /** @type {Map<string, HTMLElement>} */
    this.nodes = new Map();
  }

  /** The turn is over: nothing still streams. A call that never got its result says so. */
  settle() {
    for (const node of this.nodes.values()) {
      node.classList.remove('streaming');
      if (node.matches('.tool-card:is([data-state="running"], [data-state="awaiting"])')) {
        node.dataset.state = 'interrupted';
        node.querySelector('.tool-state').textContent = 'no result';
      }
    }
  }

  /** A closing line under the turn: `completed · 169 events · 4.2 s`. */
  showEnd(record) {
    const parts = [record.status];
    if (typeof record.lastSeq === 'number') parts.push(`${record.lastSeq + 1} events`);
    if (record.finishedAt) parts.push(`${((record.finishedAt - record.startedAt) / 1000).toFixed(1)} s`);
    if (record.error?.message) parts.push(record.error.message);
    this.end ??= el('div', 'run-end');
    this.end.textContent = parts.join(' · ');
    this.view.keepBottom(() => this.node.append(this.end));
  }

  /** The prompt that started the run, when this tab knows it (the stream itself does not carry it). */
  showPrompt(prompt) {
    this.update({ kind: 'text', id: 'prompt', role: 'user', text: prompt, streaming: false });
  }

  /** Creates or updates the element of one transcript item, keeping the reader at the bottom if they were there. */
  update(item) {
    this.view.keepBottom(() => {
      const key = `${item.kind}:${item.id}`;
      const [create, update] = VIEWS[item.kind];
      let node = this.nodes.get(key);
      if (!node) {
        node = create(item);
        this.nodes.set(key, node);
        this.node.insertBefore(node, this.end); // before the closing line, if any
      }
      update(node, item);
    });
  }

  /** The card of tool call `id`, if this turn shows it. */
  toolCard(id) {
    return this.nodes.get(`tool:${id}`) ?? null;
  }

  /** @param {{ items: object[] }} transcript */
  renderAll(transcript) {
    for (const item of transcript.items) this.update(item);
  }

  remove() {
    this.node.remove();
    this.view.turns.delete(this);
  }
}

export class TranscriptView {
  /** @param {HTMLElement} root where turns go @param {HTMLElement} scroller the element that scrolls */
  constructor(root, scroller) {
    this.root = root;
    this.scroller = scroller;
    /** @type {Set<TurnView>} */
    this.turns = new Set();
  }

  /** A new turn's section: after every other, or first (`{ first: true }`: the turns read back from the thread). */
  addTurn({ first = false } = {}) {
    const node = el('div', 'turn');
    const turn = new TurnView(this, node);
    const before = first ? this.root.querySelector(':scope > .turn') : null;
    this.turns.add(turn);
    this.keepBottom(() => this.root.insertBefore(node, before));
    return turn;
  }

  /** Removes every turn (the intro stays, hidden or not, as the caller decides). */
  clear() {
    for (const turn of [...this.turns]) turn.remove();
  }

  /** Runs `change`, then follows the stream if the reader was at the bottom; one who scrolled up stays put. */
  keepBottom(change) {
    const s = this.scroller;
    const stick = s.scrollTop + s.clientHeight >= s.scrollHeight - 80;
    change();
    if (stick) s.scrollTop = s.scrollHeight;
  }
}
