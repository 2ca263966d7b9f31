/**
 * Runtime: interprets the machines in machines/ with real actors (projection functions,
 * provider clients, the local summarizer), persists and resumes turns, and exposes inspection.
 */
export * from './actor-failure.js';
export * from './checkpoint.js';
export * from './local-summary/create-local-summarizer.js';
export * from './local-summary/local-summarizer-options.js';
export {
  createCompactionImplementations,
  provideCompaction,
  inlineOutputTokens,
  withLeadingSystem,
  type CompactionImplementationsDeps,
} from './compaction/compaction.implementations.js';
export type { CompactionDeps } from './compaction/compaction-deps.js';
export * from './inspection.js';
export * from './local-summary/local-summarizer.js';
export type { SummaryCacheReport } from './local-summary/summary-prefix.js';
export * from './message-store.js';
export { DEFAULT_PROJECTION, type ProjectionFunctions, type TurnActorDeps } from './turn/turn-projection.js';
export * from './resolved-config.js';
export * from './turn/turn.implementations.js';
export * from './turn-runner.js';
export * from './turn-runner-types.js';
export * from './turn/window-too-small.js';
