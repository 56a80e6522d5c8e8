import type { StreamChunk } from '@tanstack/ai';
import { ProtocolError } from './errors.ts';
import { parseRunView, type RunView } from './record.ts';
import { isObject, ownRecord } from './json.ts';
import { parseToolResult, type ToolOutcome } from './tools.ts';

/**
 * Tail frames: what a WebSocket message, an NDJSON line or an SSE event
 * carries from the relay to a client. One union per direction.
 *
 * `id` duplicates `seq` as a string because `@tanstack/ai-client` recognises a
 * durable envelope as `{id: string, chunk}` with no top-level `type`, and
 * resumes from that `id` on reconnect.
 */
export interface EventFrame {
  seq: number;
  id: string;
  chunk: StreamChunk;
}

/** Sent once the run is terminal and this reader has every event; the socket then closes with 1000. */
export interface StatusFrame {
  type: 'status';
  record: RunView;
}

/**
 * The relay's answer to a client's `tool_result` frame, on that socket only:
 * `status` is what `POST /runs/:runId/tool-results` would have answered
 * (200, 403, 404 or 409), with the error's code and message when not 200.
 */
export interface ToolResultAnswerFrame {
  type: 'tool_result_answer';
  toolCallId: string;
  status: number;
  error?: { code: string; message: string };
}

export type TailFrame = EventFrame | StatusFrame;

/** What a WebSocket tail may receive: the tail, and answers to this client's own `tool_result` frames. */
export type SocketFrame = TailFrame | ToolResultAnswerFrame;

/** Client → relay over the WebSocket. `@tanstack/ai-client` sends `abort` when the user stops. */
export interface AbortFrame {
  type: 'abort';
  runId?: string;
}

/** SPEC "Interactive runs": a client tool call's answer, on a socket whose credentials may answer. */
export interface ToolResultFrame {
  type: 'tool_result';
  toolCallId: string;
  outcome: ToolOutcome;
}

export type ClientFrame = AbortFrame | ToolResultFrame;

/** WebSocket close codes the relay uses, so clients can tell them apart. */
export const CLOSE_CODES = {
  /** The run is terminal and the client has every event. */
  done: 1000,
  /** The server is going away (the run's storage was deleted, or the object is shutting down). */
  goingAway: 1001,
  /** The socket's stored cursor could not be read (e.g. written by an incompatible deploy); reconnect with your last seq. */
  unreadableState: 1011,
} as const;

export function eventFrame(seq: number, chunk: StreamChunk): EventFrame {
  return { seq, id: String(seq), chunk };
}

export function statusFrame(record: RunView): StatusFrame {
  return { type: 'status', record };
}

export function isStatusFrame(frame: SocketFrame): frame is StatusFrame {
  return 'type' in frame && frame.type === 'status';
}

export function isEventFrame(frame: SocketFrame): frame is EventFrame {
  return !('type' in frame);
}

/** A chunk is an object with a string `type`; its fields are the harness's business. */
export function isStreamChunk(value: unknown): value is StreamChunk {
  return isObject(value) && Object.hasOwn(value, 'type') && typeof value.type === 'string' && value.type !== '';
}

export function parseTailFrame(input: unknown): TailFrame {
  const frame = parseSocketFrame(input);
  if (isEventFrame(frame) || isStatusFrame(frame)) return frame;
  throw new ProtocolError('frame.type', 'a tool_result_answer is no tail frame');
}

export function parseSocketFrame(input: unknown): SocketFrame {
  const value = ownRecord(input, 'frame');
  if (value.type === 'status') return statusFrame(parseRunView(value.record, 'frame.record'));
  if (value.type === 'tool_result_answer') {
    const { toolCallId, status, error } = value;
    if (typeof toolCallId !== 'string' || typeof status !== 'number') throw new ProtocolError('frame', 'expected {toolCallId, status}');
    const frame: ToolResultAnswerFrame = { type: 'tool_result_answer', toolCallId, status };
    if (isObject(error) && typeof error.code === 'string' && typeof error.message === 'string') frame.error = { code: error.code, message: error.message };
    return frame;
  }
  const seq = value.seq;
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) throw new ProtocolError('frame.seq', 'expected an integer >= 0');
  if (!isStreamChunk(value.chunk)) throw new ProtocolError('frame.chunk', 'expected a StreamChunk');
  return eventFrame(seq, value.chunk);
}

export function parseClientFrame(input: unknown): ClientFrame | null {
  let value: Record<string, unknown>;
  try {
    value = ownRecord(input, 'frame');
  } catch {
    return null;
  }
  if (value.type === 'tool_result') {
    try {
      const { toolCallId, outcome } = parseToolResult(value, 'frame', ['type']);
      return { type: 'tool_result', toolCallId, outcome };
    } catch {
      return null;
    }
  }
  if (value.type !== 'abort') return null;
  return value.runId === undefined || typeof value.runId !== 'string' ? { type: 'abort' } : { type: 'abort', runId: value.runId };
}

/** SSE encoding of a frame: `id: <seq>` + the chunk, or `event: status` + the status frame. */
export function toSse(frame: EventFrame | StatusFrame): string {
  if (isStatusFrame(frame)) return `event: status\ndata: ${JSON.stringify(frame)}\n\n`;
  return sseEventText(frame.seq, JSON.stringify(frame.chunk));
}

export function toNdjson(frame: TailFrame): string {
  return `${JSON.stringify(frame)}\n`;
}

/** The SSE event for a chunk held as JSON text; `toSse` of an event frame is this. */
export function sseEventText(seq: number, chunkJson: string): string {
  return `id: ${seq}\ndata: ${chunkJson}\n\n`;
}

/**
 * The serialized `EventFrame` for a chunk already held as JSON text. Replay
 * and fan-out send stored chunks without parsing them again; this is the one
 * place that knows the frame's JSON layout, and it matches `eventFrame`.
 */
export function eventFrameJson(seq: number, chunkJson: string): string {
  return `{"seq":${seq},"id":"${seq}","chunk":${chunkJson}}`;
}
