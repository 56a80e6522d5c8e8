// Values the global setups hand to tests and to the workerd project configs.
declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the real runner started for the driver tests. */
    runnerUrl: string;
    /** Its RUNNER_TOKEN, also the driver project's RUNNER_TOKEN binding. */
    runnerToken: string;
    /** Base URL of the container host behind the sandbox project's stand-in for ctx.container. */
    containerHostUrl: string;
    /** Base URL of the webhook double the tools project's tools call. */
    webhookUrl: string;
  }
}

export {};
