export * from './loop-guard.js';
export * from './turn.machine.js';
export * from './turn.types.js';
export * from './cache-policy.js';
export * from './request-fit.js';
export * from './checkpoint-policy.js';
