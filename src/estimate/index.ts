export * from './counters.js';
export * from './estimator.js';
export * from './running-total.js';
export * from './usage-anchor.js';
