import type { TestProject } from 'vitest/node';
import { startRunner } from '../../container/src/server.ts';
import { newRunnerToken } from '../../scripts/private-env.ts';

/**
 * Starts the real runner program on a free loopback port for the driver
 * tests. Keep-alives are slowed down so a stalled harness is real silence.
 */
export default async function setup(project: TestProject) {
  const token = newRunnerToken();
  const runner = await startRunner({ port: 0, host: '127.0.0.1', config: { keepAliveMs: 60_000, token }, log: () => {} });
  project.provide('runnerUrl', runner.url);
  project.provide('runnerToken', token);
  return () => runner.close();
}
