/**
 * The Worker of the `sandbox` project: the real app and Durable Objects
 * (RunObject, ThreadObject, …), and the real Sandbox class whose `ctx.container` is the
 * stand-in (workerd has no containers here, and lets the property be
 * assigned before the SDK's constructor reads it).
 */
import { Sandbox as RelaySandbox } from '../../src/runner/sandbox-object.ts';
import { containerStandIn } from './container-standin.ts';

// Every Durable Object the Worker exports, as it grows; the local Sandbox below shadows the SDK's.
export * from '../../src/index.ts';
export { default } from '../../src/index.ts';

interface StandInEnv {
  CONTAINER_HOST_URL: string;
}

export class Sandbox extends RelaySandbox<StandInEnv> {
  constructor(ctx: DurableObjectState<{}>, env: StandInEnv) {
    (ctx as { container?: unknown }).container = containerStandIn({ hostUrl: env.CONTAINER_HOST_URL, key: ctx.id.toString() });
    super(ctx, env);
  }
}
