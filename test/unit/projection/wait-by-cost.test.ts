import { describe, it, expect } from '@jest/globals';
import {
  cycleAfterPass,
  economicCycleTokens,
  firstCacheCycle,
  nextCacheCycle,
  waitCanPay,
  type CacheCycle,
} from '#src/projection/index.js';

/** `n` requests, each `step` tokens larger than the last, after `c`. */
function grow(c: CacheCycle, step: number, n: number): CacheCycle {
  for (let k = 0; k < n; k++) c = nextCacheCycle(c, true, c.last + step);
  return c;
}

describe('the compaction wait by expected cost', () => {
  it('H5: the cheapest growth between passes is √(2 × growth per request × cost of a pass), in cache-read units', () => {
    // A pass leaving 10,000 tokens with a 4,000-token summary: 10,000 × (10 + 12.5 − 1) + 4,000 × 50.
    expect(economicCycleTokens(1_200, 10_000, 4_000)).toBeCloseTo(Math.sqrt(2 * 1_200 * 415_000), 6);
    expect(economicCycleTokens(4_800, 10_000, 4_000) / economicCycleTokens(1_200, 10_000, 4_000)).toBeCloseTo(
      2,
      9,
    );
    expect(economicCycleTokens(0, 10_000, 4_000)).toBe(0);
    expect(economicCycleTokens(-5, -1, -1)).toBe(0);
  });

  it('H5: the cycle keeps the largest growth of one request since the cache was last rewritten; a changed prefix or a pass starts over', () => {
    let c = firstCacheCycle(12_000);
    c = nextCacheCycle(c, false, 3_000);
    expect(c).toEqual({ last: 3_000, maxStep: 0, afterPass: 12_000 });
    c = nextCacheCycle(nextCacheCycle(nextCacheCycle(c, true, 4_000), true, 9_000), true, 9_500);
    expect(c).toEqual({ last: 9_500, maxStep: 5_000, afterPass: 12_000 });
    expect(nextCacheCycle(c, false, 9_000)).toEqual({ last: 9_000, maxStep: 0, afterPass: 12_000 });
    expect(cycleAfterPass(8_000)).toEqual({ last: 8_000, maxStep: 0, afterPass: 8_000 });
  });

  it('H5: a wait can pay in a 32k window (threshold 18,000) and cannot in a 200k one (threshold 144,000) at the same growth', () => {
    // After a pass that left 8,000 tokens, 1,500 tokens a request, a 4,000-token summary: L* ≈ 33,400.
    const c = grow(cycleAfterPass(8_000), 1_500, 6);
    const lStar = economicCycleTokens(1_500, 8_000, 4_000);
    expect(lStar).toBeGreaterThan(33_000);
    expect(lStar).toBeLessThan(34_000);
    expect(waitCanPay(c, 18_000, 4_000)).toBe(true);
    expect(waitCanPay(c, 144_000, 4_000)).toBe(false);
    // At 64k (threshold 42,000) slow growth rules the wait out; one large result (20,200 tokens in
    // one request) is enough to keep it possible.
    expect(waitCanPay(grow(cycleAfterPass(8_000), 300, 6), 42_000, 4_000)).toBe(false);
    expect(waitCanPay(nextCacheCycle(grow(cycleAfterPass(8_000), 300, 6), true, 30_000), 42_000, 4_000)).toBe(
      true,
    );
  });
});
