import { describe, it, expect } from '@jest/globals';
import { resolveBudgets } from '../../../src/projection/budgets.js';
import { cacheAwareThreshold } from '../../../src/projection/cache-aware.js';
import { createWaitByCost, economicCycleTokens } from '../../../dev/replay/wait-by-cost.js';

/** Feeds `n` intact requests growing `g` tokens each from `start`; returns the last pressure. */
function grow(w: ReturnType<typeof createWaitByCost>, start: number, g: number, n: number): number {
  w.request(false, start);
  let p = start;
  for (let k = 0; k < n; k++) w.request(true, (p += g));
  return p;
}

describe('compaction wait by expected cost (issue 16 experiment, H5)', () => {
  it('H5: the cheapest cycle is sqrt(2 × growth × pass cost), in cache-read units', () => {
    // Pass: 10,000 tokens left × (10 + 12.5 − 1) + 4,000 summary tokens × 50 = 415,000.
    const c = { start: 10_000, requests: 20, afterPass: 10_000, summary: 4_000, passed: true };
    expect(economicCycleTokens(c, 10_000 + 20 * 1_200)).toBeCloseTo(Math.sqrt(2 * 1_200 * 415_000), 6);
    expect(economicCycleTokens({ ...c, requests: 0 }, 30_000)).toBe(0);
    // Four times the growth: twice the cycle.
    expect(
      economicCycleTokens(c, 10_000 + 20 * 4_800) / economicCycleTokens(c, 10_000 + 20 * 1_200),
    ).toBeCloseTo(2, 6);
  });

  it('H5: gate: the usual wait where a pass is worth putting off (32k), none where the threshold lies beyond the cheapest cycle (200k)', () => {
    for (const [capacity, waits] of [
      [32_000, true],
      [200_000, false],
    ] as const) {
      const b = resolveBudgets({ capacity, reservedOutput: 8_000 });
      const budget = capacity - 8_000;
      const threshold = b.compactionThreshold as number;
      const w = createWaitByCost(b, 'gate');
      const p = grow(w, 2_000, 1_500, Math.ceil((threshold - 2_000) / 1_500));
      const waited = cacheAwareThreshold(threshold, budget, true);
      expect(waited).toBeGreaterThan(threshold);
      expect(w.threshold(threshold, waited, p)).toBe(waits ? waited : threshold);
    }
  });

  it('H5: bound cuts the wait where the cycle reaches its cheapest length; gate-before-pass keeps the usual wait after a pass', () => {
    const b = resolveBudgets({ capacity: 64_000, reservedOutput: 8_000 });
    const threshold = b.compactionThreshold as number;
    const waited = cacheAwareThreshold(threshold, 56_000, true) as number;
    const bound = createWaitByCost(b, 'bound');
    bound.passed(14_000, 3_000);
    const p = grow(bound, 14_000, 1_400, 20);
    const cut = bound.threshold(threshold, waited, p) as number;
    expect(cut).toBeGreaterThanOrEqual(threshold);
    expect(cut).toBeLessThanOrEqual(waited);
    const lStar = Math.sqrt(2 * 1_400 * (14_000 * 21.5 + 3_000 * 50));
    expect(cut).toBe(
      threshold + Math.min(waited - threshold, Math.max(0, Math.floor(14_000 + lStar - threshold))),
    );
    const before = createWaitByCost(b, 'gate-before-pass');
    before.passed(5_000, 500);
    before.request(true, 6_000); // far from the cheapest cycle, but after a pass the usual wait applies
    expect(before.threshold(threshold, waited, 6_000)).toBe(waited);
    const gate = createWaitByCost(b, 'gate');
    gate.passed(5_000, 500);
    gate.request(true, 6_000);
    expect(gate.threshold(threshold, waited, 6_000)).toBe(threshold);
    expect(gate.threshold(null, null, 1)).toBeNull();
  });
});
