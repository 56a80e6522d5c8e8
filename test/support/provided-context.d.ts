// Values the global setups hand to tests and to the workerd project configs.
declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the real runner started for the driver tests. */
    runnerUrl: string;
    /** Base URL of the container host behind the sandbox project's stand-in for ctx.container. */
    containerHostUrl: string;
  }
}

export {};
