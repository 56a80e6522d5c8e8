import runLog from '../../migrations/0001_run_log.sql';
import threadLink from '../../migrations/0002_thread_link.sql';
import runUsage from '../../migrations/0003_run_usage.sql';
import toolCalls from '../../migrations/0004_tool_calls.sql';
import type { Migration } from '../storage/migrations.ts';

/** The run object's schema, in order. */
export const RUN_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: '0001_run_log', sql: runLog },
  { version: 2, name: '0002_thread_link', sql: threadLink },
  { version: 3, name: '0003_run_usage', sql: runUsage },
  { version: 4, name: '0004_tool_calls', sql: toolCalls },
];
