import type { Budgets } from '../../src/projection/budgets.js';
import {
  cycleAfterPass,
  firstCacheCycle,
  nextCacheCycle,
  waitCanPay,
  type CacheCycle,
} from '../../src/projection/wait-by-cost.js';
import { defaultSummaryOutputTokens } from '../../src/summary/request-fit.js';

/** Tracks one replayed session's cache cycles and drops the wait where it cannot pay (`waited`: the cache-aware threshold). */
export function createWaitByCost(budgets: Budgets) {
  // A pass is expected to write a summary of the L1 output size and leave it with the L7 tail.
  const summary = defaultSummaryOutputTokens(budgets.capacity) ?? 0;
  let c: CacheCycle = firstCacheCycle((budgets.continuityTailTokens ?? 0) + summary);
  return {
    request(intact: boolean, pressure: number): void {
      c = nextCacheCycle(c, intact, pressure);
    },
    passed(pressure: number): void {
      c = cycleAfterPass(pressure);
    },
    threshold(threshold: number | null, waited: number | null): number | null {
      if (threshold === null || waited === null || waited <= threshold) return waited;
      return waitCanPay(c, threshold, summary) ? waited : threshold;
    },
  };
}
