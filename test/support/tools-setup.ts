import type { TestProject } from 'vitest/node';
import { provideRunner } from './runner-setup.ts';
import { startWebhookDouble } from './webhook-double.ts';

/** The tools project: the real runner, and an app's webhook endpoints on loopback. */
export default async function setup(project: TestProject) {
  const closeRunner = await provideRunner(project, 1_000);
  const hooks = await startWebhookDouble();
  project.provide('webhookUrl', hooks.url);
  return async () => {
    await hooks.close();
    await closeRunner();
  };
}
