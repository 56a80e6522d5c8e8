import type { TestProject } from 'vitest/node';
import { startRunner } from '../../container/src/server.ts';

/**
 * Starts the real runner program on a free loopback port for the driver
 * tests. Keep-alives are slowed down so a stalled harness is real silence.
 */
export default async function setup(project: TestProject) {
  const runner = await startRunner({ port: 0, host: '127.0.0.1', config: { keepAliveMs: 60_000 }, log: () => {} });
  project.provide('runnerUrl', runner.url);
  return () => runner.close();
}
