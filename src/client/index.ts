/**
 * The browser and Node client of harness-relay: attach to a run's tail and get
 * every chunk exactly once, across reconnects and reloads; fold the chunks into
 * a transcript a UI can render and keep. Bundled for browsers as
 * `/assets/client.js` by scripts/build-client.ts.
 */
export { attachRun } from './attach-run.ts';
export type { AttachedRun, AttachRunOptions, AttachState, WebSocketConstructor, WebSocketLike } from './attach-run.ts';
export type { BackoffOptions } from './backoff.ts';
export { RunNotFoundError } from './run-record.ts';
export { answerToolCall, PendingToolCalls, ToolAnswerError } from './tool-calls.ts';
export { relayConnection } from './relay-connection.ts';
export type { RelayConnection, RelayConnectionOptions } from './relay-connection.ts';
export type { PendingToolCall } from '../protocol/record.ts';
export { applyChunk, emptyTranscript, parseTranscript } from './transcript.ts';
export type { Transcript, TranscriptItem } from './transcript.ts';
export { transcriptFromMessages } from './thread-messages.ts';
export { HARNESS_NAMES } from '../protocol/harness.ts';
