/**
 * Request projection: pure functions that turn durable session history into
 * the messages sent on the next request. No I/O, no XState.
 */
export * from './budgets.js';
export * from './clearing-policy.js';
export * from './route-policy.js';
export * from './pairing.js';
export * from './normalize.js';
export * from './stubs.js';
export * from './diagnostics.js';
export * from './clear-tool-results.js';
export { inputClearedCall } from './clear-inputs.js';
export * from './project-request.js';
export * from './effective-limits.js';
export * from './options-schema.js';
export * from './session-settings.js';
export * from './cache-aware.js';
export { clearedCallIds, keepClearedOf, stepwiseClearing } from './sticky-clearing.js';
export * from './wait-by-cost.js';
export { fitToWindow, leaveOutOldest, type FittedRequest, type FitWindowOptions } from './fit-window.js';
export * from './recall-ids.js';
export * from './recall.js';
