import { describe, expect, it } from '@jest/globals';
import {
  BOOTSTRAP,
  bothWithinNoise,
  pairedBootstrap,
  ResamplePlans,
  verdict,
  type SessionPair,
} from '#dev/bench/paired-bootstrap.js';

/** Sessions whose dollars vary a lot from one to the next (as real sessions do). */
const BASE = [
  0.4, 2.1, 0.9, 5.3, 1.2, 0.2, 3.3, 0.7, 1.8, 4.4, 0.5, 2.6, 1.1, 0.3, 3.9, 1.5, 0.8, 2.2, 6.0, 0.6,
];

function pairs(
  dollars: (i: number, base: number) => [number, number],
  recalled: (i: number) => [number, number],
) {
  return BASE.map((base, i): SessionPair => {
    const [da, db] = dollars(i, base);
    const [ra, rb] = recalled(i);
    return { a: { dollars: da, recalled: ra, needed: 10 }, b: { dollars: db, recalled: rb, needed: 10 } };
  });
}

describe('paired bootstrap over sessions: how sure the retention report can be', () => {
  it('§14: the same seed gives the same intervals; the plan is made once per session count', () => {
    const data = pairs(
      (i, b) => [b * (1 + ((i % 5) - 2) * 0.07), b],
      (i) => [5 + (i % 4), 6],
    );
    const first = pairedBootstrap(data, new ResamplePlans());
    const again = pairedBootstrap(data, new ResamplePlans());
    expect(again).toEqual(first);
    const other = pairedBootstrap(data, new ResamplePlans({ ...BOOTSTRAP, seed: BOOTSTRAP.seed + 1 }));
    expect(other.dollars.observed).toBe(first.dollars.observed);
    expect(other.dollars.low).not.toBe(first.dollars.low);
    const plans = new ResamplePlans();
    expect(plans.indices(20)).toBe(plans.indices(20));
    expect(plans.indices(20)).toHaveLength(BOOTSTRAP.resamples * 20);
    expect(Math.max(...plans.indices(20))).toBe(19);
  });

  it('§14: a constant per-session difference gives a zero-width interval at that difference', () => {
    const d = pairedBootstrap(
      pairs(
        (_, b) => [b + 0.25, b],
        (i) => [3 + (i % 5) + 2, 3 + (i % 5)],
      ),
      new ResamplePlans(),
    );
    expect(d.sessions).toBe(BASE.length);
    // Per-session differences are 0.25 up to rounding (b + 0.25 − b), so the width is rounding only.
    for (const x of [d.dollars.observed, d.dollars.low, d.dollars.high])
      expect(x).toBeCloseTo(0.25 * BASE.length, 9);
    // Every session needs 10 and a recalls 2 more: +20 points on every resample.
    for (const x of [d.recallPoints.observed, d.recallPoints.low, d.recallPoints.high])
      expect(x).toBeCloseTo(20, 9);
    expect(verdict(d.dollars, false)).toBe('worse');
    expect(verdict(d.recallPoints, true)).toBe('better');
  });

  it('§14: a large clear difference on noisy sessions excludes 0', () => {
    const d = pairedBootstrap(
      pairs(
        (i, b) => [b * 0.6 + (i % 2) * 0.05, b],
        (i) => [4 + (i % 3), 8 - (i % 2)],
      ),
      new ResamplePlans(),
    );
    expect(d.dollars.observed).toBeLessThan(0);
    expect(d.dollars.high).toBeLessThan(0);
    expect(d.recallPoints.high).toBeLessThan(0);
    expect(verdict(d.dollars, false)).toBe('better');
    expect(verdict(d.recallPoints, true)).toBe('worse');
    expect(bothWithinNoise(d)).toBe(false);
  });

  it('§14: a symmetric noisy difference with mean 0 includes 0 on both axes', () => {
    const swing = [0.3, 1.0, 0.1, 0.6, 0.2];
    const d = pairedBootstrap(
      pairs(
        (i, b) => [b + (i % 2 === 0 ? 1 : -1) * swing[Math.floor(i / 2) % swing.length], b],
        (i) => [5 + (i % 2 === 0 ? 2 : -2), 5],
      ),
      new ResamplePlans(),
    );
    expect(d.dollars.observed).toBeCloseTo(0, 9);
    expect(d.recallPoints.observed).toBeCloseTo(0, 9);
    expect(d.dollars.low).toBeLessThan(0);
    expect(d.dollars.high).toBeGreaterThan(0);
    expect(d.recallPoints.low).toBeLessThan(0);
    expect(d.recallPoints.high).toBeGreaterThan(0);
    expect(verdict(d.dollars, false)).toBe('within noise');
    expect(verdict(d.recallPoints, true)).toBe('within noise');
    expect(bothWithinNoise(d)).toBe(true);
  });

  it('§14: recall is a ratio of sums over the resampled sessions, never an average of per-session percentages', () => {
    // One session needs 1 result, the other 99. Ratio of sums: a 50/100, b 99/100 → −49 points.
    // Averaging per-session recall would say a (100 % + 49.5 %) / 2 against b (0 % + 100 %) / 2 → +24.7.
    const data: SessionPair[] = [
      { a: { dollars: 1, recalled: 1, needed: 1 }, b: { dollars: 1, recalled: 0, needed: 1 } },
      { a: { dollars: 2, recalled: 49, needed: 99 }, b: { dollars: 2, recalled: 99, needed: 99 } },
    ];
    const d = pairedBootstrap(data, new ResamplePlans());
    expect(d.recallPoints.observed).toBeCloseTo(-49, 9);
    // Every resample of two sessions is {1,1} (+100), {1,2} (−49) or {2,2} (49/99 − 99/99: −50.5 points).
    expect(d.recallPoints.low).toBeCloseTo(100 * (49 / 99 - 1), 9);
    expect(d.recallPoints.high).toBeCloseTo(100, 9);
  });

  it('§14: sessions where either policy failed are left out of both sides', () => {
    const data = pairs(
      (i, b) => [b + (i % 3) * 0.2, b],
      (i) => [4 + (i % 5), 6],
    );
    const failed: SessionPair[] = [
      ...data,
      { a: null, b: { dollars: 100, recalled: 0, needed: 50 } },
      { a: { dollars: 100, recalled: 50, needed: 50 }, b: null },
    ];
    const plans = new ResamplePlans();
    const d = pairedBootstrap(failed, plans);
    expect(d.sessions).toBe(BASE.length);
    expect(d).toEqual(pairedBootstrap(data, plans));
    expect(pairedBootstrap([{ a: null, b: null }], plans).sessions).toBe(0);
  });
});
