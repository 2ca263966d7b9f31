export * from './capacity-retry.machine.js';
export * from './capacity-retry.types.js';
