/**
 * Pure XState machine definitions. They import only `xstate` and each other; every effect
 * is a placeholder actor that src/runtime provides with `machine.provide()`.
 */
export * from './capacity-retry/index.js';
export * from './compaction/index.js';
export * from './hierarchical-summary/index.js';
export * from './shared/failure.js';
export * from './shared/placeholder.js';
export * from './shared/summary.types.js';
export * from './turn/index.js';
