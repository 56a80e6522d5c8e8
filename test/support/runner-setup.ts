import type { TestProject } from 'vitest/node';
import { startRunner } from '../../container/src/server.ts';
import { newRunnerToken } from '../../scripts/private-env.ts';

/** Starts the real runner program on a free loopback port and hands its URL and token to the project. */
export async function provideRunner(project: TestProject, keepAliveMs: number): Promise<() => Promise<void>> {
  const token = newRunnerToken();
  const runner = await startRunner({ port: 0, host: '127.0.0.1', config: { keepAliveMs, token }, log: () => {} });
  project.provide('runnerUrl', runner.url);
  project.provide('runnerToken', token);
  return () => runner.close();
}

/** The driver tests' runner. Keep-alives are slowed down so a stalled harness is real silence. */
export default function setup(project: TestProject) {
  return provideRunner(project, 60_000);
}
