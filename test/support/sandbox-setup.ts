import type { TestProject } from 'vitest/node';
import { startContainerHost } from './container-host.ts';

/** The container host the `sandbox` project's stand-in starts containers through. */
export default async function setup(project: TestProject) {
  const host = await startContainerHost();
  project.provide('containerHostUrl', host.url);
  return () => host.close();
}
