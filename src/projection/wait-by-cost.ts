// Whether a compaction wait pays is a decision of the turn machine; it lives with its other policy.
export {
  cycleAfterPass,
  economicCycleTokens,
  firstCacheCycle,
  nextCacheCycle,
  waitCanPay,
  type CacheCycle,
} from '../../machines/turn/cache-policy.js';
