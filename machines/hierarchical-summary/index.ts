export * from './hierarchical-summary.machine.js';
export * from './hierarchical-summary.types.js';
