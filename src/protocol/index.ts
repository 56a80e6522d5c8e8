/**
 * The wire contract shared by the Worker, the runner in the container and the
 * client SDK. Nothing here imports a runtime: type-only imports of
 * `@tanstack/ai`, plain functions, and `.ts` specifiers so Node runs it as is.
 */
export * from './chunks.ts';
export * from './credentials.ts';
export * from './errors.ts';
export * from './frames.ts';
export * from './harness.ts';
export * from './ids.ts';
export * from './json.ts';
export * from './messages.ts';
export * from './record.ts';
export * from './runs.ts';
export * from './runner.ts';
export * from './workspace.ts';
export * from './tools.ts';
