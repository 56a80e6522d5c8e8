import { verifyEvents } from '@ag-ui/client';
import type { BaseEvent } from '@ag-ui/core';
import { EventSchemas } from '@ag-ui/core/schemas';
import { from, lastValueFrom, toArray } from 'rxjs';

/**
 * AG-UI 1.0's own verdict on a run's chunks: each one against `@ag-ui/core`'s
 * `EventSchemas`, the whole run through `@ag-ui/client`'s `verifyEvents` (first
 * event RUN_STARTED, start/end pairs matched, nothing after the terminal one).
 * Returns the problems found, so a test's failure says which chunk and why.
 */
export async function agUiProblems(chunks: readonly unknown[]): Promise<string[]> {
  const problems: string[] = [];
  chunks.forEach((chunk, seq) => {
    const parsed = EventSchemas.safeParse(chunk);
    if (!parsed.success) problems.push(`chunk ${seq} (${String((chunk as { type?: unknown }).type)}): ${parsed.error.message}`);
  });
  try {
    await lastValueFrom(from(chunks as BaseEvent[]).pipe(verifyEvents(false), toArray()));
  } catch (error) {
    problems.push(`verifyEvents: ${error instanceof Error ? error.message : String(error)}`);
  }
  return problems;
}
