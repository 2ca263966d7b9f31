/**
 * `context-compactor/testing`: every path of each machine, walked from its graph, as plain
 * data, and a runner that drives a path against your own actors (your provider strategy,
 * summarizer or store). No test framework is needed: the runner resolves or throws.
 *
 *   it.each(capacityRetryPaths().map((p) => [p.name, p]))('%s', (_name, path) =>
 *     runPath(path, { actors: { requestSummary: mySummarizer } }));
 */
export {
  capacityRetryPaths,
  compactionPaths,
  hierarchicalSummaryPaths,
  runPath,
  turnPaths,
} from './paths.js';
export type { Expected, MachinePath, PathStep, Reply } from './path-types.js';
export type { OwnActor, PathRun, RunPathOptions } from './run-path.js';
export type { RunRecord } from './record-run.js';
