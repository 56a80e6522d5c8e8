import type { TestProject } from 'vitest/node';
import { provideRunner } from './runner-setup.ts';

/**
 * The real runner for the limits tests, with keep-alives ten times a second:
 * a quiet harness then looks alive to the transport (no stall), so only the
 * idle timeout, which keep-alives do not reset, can end it.
 */
export default function setup(project: TestProject) {
  return provideRunner(project, 100);
}
