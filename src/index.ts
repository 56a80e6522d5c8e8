import { app } from './http/app.ts';

export { RunObject } from './run/run-object.ts';
export { ThreadObject } from './thread/thread-object.ts';
export { TenantObject } from './tenant/tenant-object.ts';

export default app;
// The container class behind the `Sandbox` binding (wrangler.toml `[[containers]]`).
export { Sandbox } from './runner/sandbox-object.ts';
