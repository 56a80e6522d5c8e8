/**
 * The `sandbox` project's Worker variables, shared with its tests (which
 * check what reaches the runner and what must not). RUNNER_URL is unset, so
 * runs take the container transport.
 */
export const SANDBOX_PROJECT_VARS = {
  RUNNER_SECRET: 'sandbox-project-runner-secret-5b0c',
  ANTHROPIC_API_KEY: 'sk-ant-sandbox-project-key-19f3',
  STALL_TIMEOUT_SECONDS: '20',
  // The SDK's bound on getting an instance (default 30 s, minimum 5 s): a
  // refused start (max_instances) is reported after it.
  SANDBOX_INSTANCE_TIMEOUT_MS: '5000',
  // The SDK starts its containers with this in their environment (Sandbox.envVars).
  SANDBOX_LOG_LEVEL: 'warn',
} as const;
