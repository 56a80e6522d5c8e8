import { Sandbox as SdkSandbox } from '@cloudflare/sandbox';

/**
 * The container class behind the `Sandbox` binding: @cloudflare/sandbox's
 * own, plus the one liveness check the SDK makes but does not expose.
 * `getState()` answers the status stored in the object's storage, which is
 * stale after the container ended while the object was away (it still says
 * `healthy`); the SDK itself tells a live container by workerd's
 * `ctx.container.running` (Sandbox.containerFetch's "stale state" check).
 * Every other call that reaches the container boots it when it is not
 * running, so a cancel asks this first (sandbox-transport.ts).
 */
export class Sandbox<Env = unknown> extends SdkSandbox<Env> {
  /** True only while workerd reports the container running; never starts one. */
  async isContainerRunning(): Promise<boolean> {
    return this.ctx.container?.running === true;
  }
}
