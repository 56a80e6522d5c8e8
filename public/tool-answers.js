import { el } from '/render.js';

/**
 * Client tool calls waiting for a person (SPEC "Interactive runs"), drawn as
 * an answer section inside the call's tool card: Approve / Deny for an
 * `approve` call (a harness asking permission, input `{tool, input}`), a
 * JSON answer for any other client tool.
 *
 * Which calls wait comes from the SDK's tail (`onPendingToolCalls`: the
 * chunks that mark a call `client`, and the record's `pendingToolCalls`). A
 * card goes away for good when the call's `TOOL_CALL_RESULT` arrives, when
 * this tab's answer is taken, or when another tab's was (`409
 * already_answered`), so a list read before the answer cannot bring it back.
 */

export const APPROVAL_TOOL = 'approve';

/** Answers that mean "nothing left to answer here": another tab won, the call is unknown, or the run is over. */
const SETTLED_CODES = new Set(['already_answered', 'run_finished', 'tool_call_not_found', 'run_not_found']);

export class ToolAnswers {
  /**
   * @param {object} options
   * @param {import('/render.js').TurnView} options.turn the run's turn, where its tool cards are
   * @param {(toolCallId: string) => boolean} options.hasResult the call's result is already shown
   * @param {(toolCallId: string, output: unknown) => Promise<{ok: boolean, status: number, code?: string, message?: string}>} options.send
   */
  constructor({ turn, hasResult, send }) {
    this.turn = turn;
    this.hasResult = hasResult;
    this.send = send;
    /** @type {Set<string>} calls that may never show a form again */
    this.resolved = new Set();
  }

  /** Shows a form for every listed call this tab has not seen answered. */
  sync(pending) {
    for (const call of pending) this.show(call);
  }

  show(call) {
    const { toolCallId } = call;
    if (this.resolved.has(toolCallId) || this.hasResult(toolCallId)) return;
    let card = this.turn.toolCard(toolCallId);
    if (!card) {
      // A call the stream has not shown (yet): its card comes from the record.
      this.turn.update({ kind: 'tool', id: toolCallId, name: call.name, args: JSON.stringify(call.input), result: null, streaming: false });
      card = this.turn.toolCard(toolCallId);
    }
    if (card.querySelector('.tool-answer')) return;
    const section = call.name === APPROVAL_TOOL ? this.#approval(call) : this.#form(call);
    section.classList.add('tool-section', 'tool-answer');
    section.dataset.answerFor = toolCallId;
    this.turn.view.keepBottom(() => card.append(section));
    setCardState(card, 'awaiting', 'needs your answer');
  }

  /** The call is answered (its result arrived, or the relay took an answer): its form goes, and never comes back. */
  resolve(toolCallId, note = null) {
    this.resolved.add(toolCallId);
    const card = this.turn.toolCard(toolCallId);
    card?.querySelector('.tool-answer')?.remove();
    if (card && !this.hasResult(toolCallId)) setCardState(card, 'running', note ?? 'answered');
  }

  /** The run ended: nothing can be answered any more. */
  clear() {
    for (const section of this.turn.node.querySelectorAll('.tool-answer')) this.resolve(section.dataset.answerFor);
  }

  #approval(call) {
    const section = el('div');
    const tool = typeof call.input?.tool === 'string' ? call.input.tool : 'a tool';
    const question = el('p', 'answer-question');
    question.append('The harness asks to run ', el('code', '', tool), '.');
    const approve = el('button', 'btn primary', 'Approve');
    const deny = el('button', 'btn danger', 'Deny');
    approve.type = deny.type = 'button';
    approve.dataset.behavior = 'allow';
    deny.dataset.behavior = 'deny';
    const row = el('div', 'answer-row');
    row.append(approve, deny);
    section.append(el('div', 'label', 'Approval'), question, row, el('div', 'answer-error'));
    const answer = (behavior) => this.#answer(call, section, { behavior }, behavior === 'allow' ? 'approved' : 'denied');
    approve.addEventListener('click', () => answer('allow'));
    deny.addEventListener('click', () => answer('deny'));
    return section;
  }

  #form(call) {
    const section = el('form');
    const input = el('textarea', 'answer-json');
    input.rows = 3;
    input.spellcheck = false;
    input.value = '{}';
    input.setAttribute('aria-label', `Answer for ${call.name}`);
    const submit = el('button', 'btn primary', 'Send answer');
    submit.type = 'submit';
    const row = el('div', 'answer-row');
    row.append(submit);
    section.append(el('div', 'label', 'Your answer (JSON)'), input, row, el('div', 'answer-error'));
    section.addEventListener('submit', (event) => {
      event.preventDefault();
      let output;
      try {
        output = JSON.parse(input.value);
      } catch (error) {
        return showAnswerError(section, `Not valid JSON: ${error.message}`);
      }
      this.#answer(call, section, output, 'answered');
    });
    return section;
  }

  async #answer(call, section, output, note) {
    const buttons = section.querySelectorAll('button');
    for (const button of buttons) button.disabled = true;
    showAnswerError(section, '');
    let outcome;
    try {
      outcome = await this.send(call.toolCallId, output);
    } catch (error) {
      outcome = { ok: false, status: 0, message: `Could not reach the relay: ${error.message}` };
    }
    if (outcome.ok) return this.resolve(call.toolCallId, note);
    // Someone else's answer (or the run's end) got there first: nothing to say, the stream shows what happened.
    if (outcome.status === 404 || SETTLED_CODES.has(outcome.code)) return this.resolve(call.toolCallId);
    for (const button of buttons) button.disabled = false;
    showAnswerError(section, outcome.message ?? `The relay answered HTTP ${outcome.status}.`);
  }
}

function setCardState(card, state, label) {
  card.dataset.state = state;
  card.querySelector('.tool-state').textContent = label;
}

function showAnswerError(section, message) {
  section.querySelector('.answer-error').textContent = message;
}
