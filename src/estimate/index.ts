export * from './counters.js';
export * from './estimator.js';
