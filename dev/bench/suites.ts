import { agentsSuite } from './agents-bench.js';
import { estimatorSuite } from './estimator-bench.js';
import { loopsSuite } from './loops-bench.js';
import { durableSuite } from './durable-bench.js';
import { peerSpeedSuite } from './peer-speed-bench.js';
import { projectionSuite } from './projection-bench.js';
import { restateSuite } from './restate-bench.js';
import { retentionSuite } from './retention-bench.js';
import { scaleSuite } from './scale-bench.js';
import { serveSuite } from './serve-bench.js';
import { startupSuite } from './startup-bench.js';
import type { BenchSuite } from './types.js';

/** Every benchmark suite, in the order they run. */
export const suites: BenchSuite[] = [
  estimatorSuite,
  projectionSuite,
  scaleSuite,
  durableSuite,
  peerSpeedSuite,
  retentionSuite,
  startupSuite,
  loopsSuite,
  serveSuite,
  restateSuite,
  agentsSuite,
];
