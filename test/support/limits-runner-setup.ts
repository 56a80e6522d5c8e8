import type { TestProject } from 'vitest/node';
import { startRunner } from '../../container/src/server.ts';
import { newRunnerToken } from '../../scripts/private-env.ts';

/**
 * The real runner for the limits tests, with keep-alives ten times a second:
 * a quiet harness then looks alive to the transport (no stall), so only the
 * idle timeout, which keep-alives do not reset, can end it.
 */
export default async function setup(project: TestProject) {
  const token = newRunnerToken();
  const runner = await startRunner({ port: 0, host: '127.0.0.1', config: { keepAliveMs: 100, token }, log: () => {} });
  project.provide('runnerUrl', runner.url);
  project.provide('runnerToken', token);
  return () => runner.close();
}
