export * from './counters.js';
export * from './estimator.js';
export * from './usage-anchor.js';
