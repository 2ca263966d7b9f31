export * from './compaction.machine.js';
export * from './compaction.types.js';
