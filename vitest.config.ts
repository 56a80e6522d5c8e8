import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { defineConfig } from 'vitest/config';
import { faultProxy } from './test/support/fault-proxy.ts';
import { QUIET_RUNNER_TOKEN, quietRunner } from './test/support/quiet-runner.ts';
import { recordingRunner } from './test/support/recording-runner.ts';
import { sqlText } from './test/support/sql-text.ts';
import { ignoreKnownUnhandled } from './test/support/known-unhandled.ts';
import { SANDBOX_PROJECT_VARS } from './test/support/sandbox-vars.ts';
import { TOOLS_WEBHOOK_SECRET, toolsOutbound } from './test/support/tools-outbound.ts';

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    onUnhandledError: ignoreKnownUnhandled,
    projects: [
      {
        // The log, the tails and the API in workerd, fed by the tests through
        // RunObject.ingest while a quiet runner double keeps each run open.
        plugins: [
          sqlText(),
          cloudflareTest({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              // The quiet runner keeps every run open, so a file holds many active runs at once:
              // MAX_ACTIVE_RUNS is tested at a small value of its own (admission.test.ts).
              bindings: { RUNNER_URL: 'http://quiet-runner.test', RUNNER_TOKEN: QUIET_RUNNER_TOKEN, STALL_TIMEOUT_SECONDS: '3600', MAX_ACTIVE_RUNS: '10000' },
              outboundService: quietRunner,
            },
          }),
        ],
        test: { name: 'workers', include: ['test/workers/**/*.test.ts'] },
      },
      {
        // The same, with auth on: API token, allowed origins and a harness
        // secret that must never leave the environment.
        plugins: [
          sqlText(),
          cloudflareTest({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                MAX_ACTIVE_RUNS: '10000',
                RUNNER_URL: 'http://quiet-runner.test',
                RUNNER_TOKEN: QUIET_RUNNER_TOKEN,
                STALL_TIMEOUT_SECONDS: '3600',
                API_TOKEN: 'test-api-token-7c1e9a52d4f8',
                ALLOWED_ORIGINS: 'https://app.example',
                ANTHROPIC_API_KEY: 'sk-ant-test-secret-value',
              },
              outboundService: recordingRunner,
            },
          }),
        ],
        test: { name: 'security', include: ['test/security/**/*.test.ts'] },
      },
      {
        // The driver in workerd against the real runner program on loopback
        // (started by the global setup), behind a proxy that can play faults.
        plugins: [
          sqlText(),
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: { RUNNER_URL: 'http://runner.test', RUNNER_TOKEN: inject('runnerToken'), STALL_TIMEOUT_SECONDS: '4' },
              outboundService: faultProxy(inject('runnerUrl')),
            },
          })),
        ],
        test: { name: 'driver', include: ['test/driver/**/*.test.ts'], globalSetup: ['test/support/runner-setup.ts'] },
      },
      {
        // SPEC's limits at small values, against the real runner: each run ends
        // with its code and the runner has no live harness for it afterwards.
        plugins: [
          sqlText(),
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                RUNNER_URL: 'http://runner.test',
                RUNNER_TOKEN: inject('runnerToken'),
                STALL_TIMEOUT_SECONDS: '1.5',
                RUN_MAX_SECONDS: '40',
                IDLE_TIMEOUT_SECONDS: '4',
                RUN_MAX_EVENTS: '300',
                RUN_MAX_BYTES: '40000',
                MAX_CLIENTS_PER_RUN: '3',
                MAX_THREAD_MESSAGES: '6',
              },
              outboundService: faultProxy(inject('runnerUrl')),
            },
          })),
        ],
        test: { name: 'limits', include: ['test/limits/**/*.test.ts'], globalSetup: ['test/support/limits-runner-setup.ts'], testTimeout: 90_000 },
      },
      {
        // Host tools against the real runner: webhook tools on a loopback
        // double (signed, retried, timed out), client tools answered by the
        // tests, and the run object restarted mid-call.
        plugins: [
          sqlText(),
          cloudflareTest(({ inject }) => ({
            wrangler: { configPath: './wrangler.toml' },
            miniflare: {
              bindings: {
                RUNNER_URL: 'http://runner.test',
                RUNNER_TOKEN: inject('runnerToken'),
                TOOL_WEBHOOK_ORIGINS: inject('webhookUrl'),
                TOOL_WEBHOOK_SECRET: TOOLS_WEBHOOK_SECRET,
                TOOL_TIMEOUT_SECONDS: '2',
                CLIENT_TOOL_TIMEOUT_SECONDS: '8',
                MAX_ACTIVE_RUNS: '10000',
              },
              outboundService: toolsOutbound(inject('runnerUrl')),
            },
          })),
        ],
        // One file at a time: a file restarts every Durable Object (abortAllDurableObjects).
        test: { name: 'tools', include: ['test/tools/**/*.test.ts'], globalSetup: ['test/support/tools-setup.ts'], testTimeout: 60_000, fileParallelism: false },
      },
      {
        // The deployed path: the real @cloudflare/sandbox Sandbox object (its
        // ctx.container a stand-in that starts real processes through the
        // global setup's container host), a control-server double, and the
        // real runner started by startProcess. RUNNER_URL is unset.
        plugins: [
          sqlText(),
          cloudflareTest(({ inject }) => ({
            main: './test/sandbox/worker.ts',
            wrangler: { configPath: './wrangler.toml' },
            miniflare: { bindings: { ...SANDBOX_PROJECT_VARS, CONTAINER_HOST_URL: inject('containerHostUrl') } },
          })),
        ],
        test: {
          name: 'sandbox',
          include: ['test/sandbox/**/*.test.ts'],
          globalSetup: ['test/support/sandbox-setup.ts'],
          // One file at a time: the files share the host's max_instances.
          fileParallelism: false,
          testTimeout: 60_000,
        },
      },
      {
        // The runner program in Node: real server, real harness processes.
        extends: './container/vitest.config.ts',
        test: { name: 'runner' },
      },
      {
        // The whole local stack (the `npm start` code path) driven from Node and a real browser.
        test: { name: 'e2e', environment: 'node', include: ['test/e2e/**/*.test.ts'], testTimeout: 120_000, hookTimeout: 120_000 },
      },
      {
        // Pure modules (protocol, NDJSON reader, watchdog) in Node.
        test: { name: 'unit', environment: 'node', include: ['test/unit/**/*.test.ts'] },
      },
    ],
  },
});
