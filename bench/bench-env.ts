import type { RelayEnv } from '../src/config.ts';
import type { BaselineRunObject } from './baseline-object.ts';
import type { LimitsObject } from './limits-object.ts';
import type { MeasuredRunObject } from './measured-run-object.ts';
import type { PipeObject } from './pipe-object.ts';

/** The bench Worker's bindings (bench/wrangler.toml): the product's plus the peers'. */
export type BenchEnv = Omit<RelayEnv, 'RUNS'> & {
  RUNS: DurableObjectNamespace<MeasuredRunObject>;
  BASELINE: DurableObjectNamespace<BaselineRunObject>;
  PIPE: DurableObjectNamespace<PipeObject>;
  LIMITS: DurableObjectNamespace<LimitsObject>;
};
