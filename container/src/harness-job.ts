import { ProtocolError, ownRecord, parseRunnerRunRequest, type RunnerRunRequest } from '../../src/protocol/index.ts';

/**
 * What the runner hands a harness process on stdin (one JSON line): the run
 * request as the relay sent it, and what the runner decided for it. The
 * workspace is the runner's choice (workspace.ts), never the request's.
 */
export interface HarnessJob {
  request: RunnerRunRequest;
  /** Absolute; only for the harnesses that work on files. */
  workspace?: string;
}

export function parseHarnessJob(value: unknown): HarnessJob {
  const { request, workspace } = ownRecord(value, 'job');
  const job: HarnessJob = { request: parseRunnerRunRequest(request) };
  if (workspace !== undefined) {
    if (typeof workspace !== 'string' || !workspace.startsWith('/')) throw new ProtocolError('job.workspace', 'expected an absolute path');
    job.workspace = workspace;
  }
  return job;
}
