import thread from '../../migrations/thread/0001_thread.sql';
import type { Migration } from '../storage/migrations.ts';

/** The thread object's schema, in order. */
export const THREAD_MIGRATIONS: readonly Migration[] = [{ version: 1, name: 'thread/0001_thread', sql: thread }];
