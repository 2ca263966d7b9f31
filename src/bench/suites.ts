import { estimatorSuite } from './estimator-bench.js';
import type { BenchSuite } from './types.js';

/** Every benchmark suite, in the order they run. */
export const suites: BenchSuite[] = [estimatorSuite];
