/**
 * Runtime: interprets the machines in machines/ with real actors (projection functions,
 * provider clients, the local summarizer), persists and resumes turns, and exposes inspection.
 */
export * from './actor-failure.js';
export * from './checkpoint.js';
export * from './create-local-summarizer.js';
export * from './local-summarizer-options.js';
export * from './compaction-actors.js';
export type { CompactionDeps } from './compaction-deps.js';
export { inlineOutputTokens, withLeadingSystem } from './native-bounds.js';
export * from './inspection.js';
export * from './local-summarizer.js';
export * from './message-store.js';
export * from './turn-actor-deps.js';
export * from './turn-actors.js';
export * from './turn-runner.js';
export * from './turn-runner-types.js';
export * from './window-too-small.js';
