import { parseToolOutcome, ownRecord, parseTrustedJson, type HostToolCall, type ToolOutcome } from '../protocol/index.ts';

export type ToolCallKind = 'webhook' | 'client' | 'unknown';

/** A host tool call as the run object keeps it. */
export interface StoredToolCall {
  toolCallId: string;
  name: string;
  kind: ToolCallKind;
  input: unknown;
  requestedAt: number;
  /** Set once answered: durable before it is forwarded. */
  outcome: ToolOutcome | null;
  answeredAt: number | null;
  /** Set once the runner took the outcome. */
  deliveredAt: number | null;
  attempts: number;
}

interface ToolCallRow {
  tool_call_id: string;
  name: string;
  kind: string;
  input: string;
  requested_at: number;
  outcome: string | null;
  answered_at: number | null;
  delivered_at: number | null;
  attempts: number;
  [key: string]: SqlStorageValue;
}

const COLUMNS = 'tool_call_id, name, kind, input, requested_at, outcome, answered_at, delivered_at, attempts';

function isKind(value: string): value is ToolCallKind {
  return value === 'webhook' || value === 'client' || value === 'unknown';
}

function fromRow(row: ToolCallRow): StoredToolCall {
  if (!isKind(row.kind)) throw new Error(`tool call ${row.tool_call_id} has an unknown kind ${row.kind}`);
  return {
    toolCallId: row.tool_call_id,
    name: row.name,
    kind: row.kind,
    input: parseTrustedJson(row.input, 'tool call input'),
    requestedAt: row.requested_at,
    outcome: row.outcome === null ? null : parseToolOutcome(ownRecord(parseTrustedJson(row.outcome, 'tool call outcome'), 'outcome'), 'outcome'),
    answeredAt: row.answered_at,
    deliveredAt: row.delivered_at,
    attempts: row.attempts,
  };
}

export type AnswerResult = { kind: 'answered'; call: StoredToolCall } | { kind: 'already_answered'; call: StoredToolCall } | { kind: 'unknown' };

/**
 * The run's host tool calls, in the run object's SQLite (migration 0004).
 * Storage only, synchronous like the run log: a call recorded in the same
 * turn as the chunk that asked for it commits with it.
 */
export class ToolCallStore {
  readonly #sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.#sql = sql;
  }

  /** Records the calls a stored batch asked for; one asked for twice (a replayed line) is kept once. */
  record(calls: readonly { call: HostToolCall; seq: number; kind: ToolCallKind }[], now: number): void {
    for (const { call, seq, kind } of calls) {
      this.#sql.exec(
        'INSERT OR IGNORE INTO tool_calls (tool_call_id, name, kind, input, requested_seq, requested_at) VALUES (?, ?, ?, ?, ?, ?)',
        call.toolCallId,
        call.toolName,
        kind,
        JSON.stringify(call.input ?? null),
        seq,
        now,
      );
    }
  }

  get(toolCallId: string): StoredToolCall | null {
    const row = this.#sql.exec<ToolCallRow>(`SELECT ${COLUMNS} FROM tool_calls WHERE tool_call_id = ?`, toolCallId).toArray()[0];
    return row ? fromRow(row) : null;
  }

  /** Every call whose outcome has not reached the runner yet, oldest first. */
  undelivered(): StoredToolCall[] {
    return this.#sql.exec<ToolCallRow>(`SELECT ${COLUMNS} FROM tool_calls WHERE delivered_at IS NULL ORDER BY requested_seq`).toArray().map(fromRow);
  }

  /** The client calls still waiting for a person's answer (the record's `pendingToolCalls`). */
  waitingClientCalls(): StoredToolCall[] {
    return this.#sql.exec<ToolCallRow>(`SELECT ${COLUMNS} FROM tool_calls WHERE kind = 'client' AND outcome IS NULL ORDER BY requested_seq`).toArray().map(fromRow);
  }

  /** Whether any call still waits for its outcome (the harness is blocked on it, not idle). */
  anyWaiting(): boolean {
    return this.#sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM tool_calls WHERE outcome IS NULL').one().n > 0;
  }

  /** When the newest outcome was stored (0: none): the harness was unblocked then. */
  lastAnsweredAt(): number {
    return this.#sql.exec<{ at: number | null }>('SELECT MAX(answered_at) AS at FROM tool_calls').one().at ?? 0;
  }

  /** The first answer wins; later ones change nothing. */
  answer(toolCallId: string, outcome: ToolOutcome, now: number): AnswerResult {
    const current = this.get(toolCallId);
    if (!current) return { kind: 'unknown' };
    if (current.outcome !== null) return { kind: 'already_answered', call: current };
    this.#sql.exec('UPDATE tool_calls SET outcome = ?, answered_at = ? WHERE tool_call_id = ? AND outcome IS NULL', JSON.stringify(outcome), now, toolCallId);
    return { kind: 'answered', call: { ...current, outcome, answeredAt: now } };
  }

  /** A webhook request is about to be made: counted first, so a restart knows one may have reached the webhook. */
  noteAttempt(toolCallId: string): void {
    this.#sql.exec('UPDATE tool_calls SET attempts = attempts + 1 WHERE tool_call_id = ?', toolCallId);
  }

  markDelivered(toolCallId: string, now: number): void {
    this.#sql.exec('UPDATE tool_calls SET delivered_at = ? WHERE tool_call_id = ? AND delivered_at IS NULL', now, toolCallId);
  }
}
