import { describe, it, expect } from '@jest/globals';
import fc from 'fast-check';
import { msg, type Message } from '#src/messages/message.js';
import {
  DEFAULT_CLEARING_POLICY,
  completeClearingPolicy,
  resolveBudgets,
  resolveEvidenceBudget,
  type Limits,
} from '#src/projection/index.js';
import { clearOldToolResultsWithRecentBatches, projectRequest } from '#support/projection/vtcode-preset.js';
import { batch, charsEstimator, deepFreeze, isStub } from '#support/projection/helpers.js';

const MAX = Number.MAX_SAFE_INTEGER;
const est = charsEstimator();
const bare = { keepToolUses: 0, keepRecentToolBatches: 0 };
const keptIds = (out: readonly Message[]) =>
  out.filter((m) => m.role === 'tool' && !isStub(m)).map((m) => m.toolCallId);

describe('evidence window ratio: B4 default unchanged', () => {
  it('B4: the default ratio is 0.5 in DEFAULT_CLEARING_POLICY and completeClearingPolicy', () => {
    expect(DEFAULT_CLEARING_POLICY.evidenceWindowRatio).toBe(0.5);
    expect(completeClearingPolicy().evidenceWindowRatio).toBe(0.5);
    expect(completeClearingPolicy({ evidenceWindowRatio: 0.75 }).evidenceWindowRatio).toBe(0.75);
  });
  it.each([0, 1, 2, 3, 15_599, 15_600, 15_601, 40_000, MAX - 1, MAX])(
    'B4: ratio 0.5 (and no ratio) gives floor(%d / 2)',
    (t) => {
      expect(resolveEvidenceBudget(t, 0.5)).toBe(Math.floor(t / 2));
      expect(resolveEvidenceBudget(t)).toBe(Math.floor(t / 2));
    },
  );
  it('B4: ratio 0.5 equals floor(trigger / 2) for every safe integer trigger (property)', () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (t) => resolveEvidenceBudget(t, 0.5) === Math.floor(t / 2)),
      { numRuns: 500 },
    );
  });
  it('B4: resolveBudgets is identical with no ratio, ratio 0.5, or a "not set" ratio (property)', () => {
    const count = fc.oneof(fc.constant(undefined), fc.constant(0), fc.nat(300_000), fc.maxSafeNat());
    const limits = fc.record({
      capacity: count,
      sessionCeiling: count,
      reservedOutput: count,
      prefixTokens: count,
      trigger: count,
    });
    fc.assert(
      fc.property(limits, (l: Limits) => {
        const base = JSON.stringify(resolveBudgets(l));
        for (const r of [0.5, 0, -1, 1.5, Number.NaN, Infinity])
          expect(JSON.stringify(resolveBudgets({ ...l, evidenceWindowRatio: r }))).toBe(base);
      }),
      { numRuns: 200 },
    );
  });
  it('B3/B4: the worked example keeps its numbers (15,600 → 7,800; default 40,000 → 20,000)', () => {
    const spec = { capacity: 32_000, reservedOutput: 4_000, prefixTokens: 2_000 };
    expect(resolveBudgets(spec)).toEqual(resolveBudgets({ ...spec, evidenceWindowRatio: 0.5 }));
    expect(resolveBudgets(spec).evidenceBudget).toBe(7_800);
    expect(resolveBudgets({}).evidenceBudget).toBe(20_000);
  });
});

describe('evidence window ratio: opt-in values (B4)', () => {
  it('B4: floor(local trigger × ratio) for 0.75, 0.9 and 1', () => {
    const spec = { capacity: 32_000, reservedOutput: 4_000, prefixTokens: 2_000 };
    expect(resolveBudgets({ ...spec, evidenceWindowRatio: 0.75 }).evidenceBudget).toBe(11_700);
    expect(resolveBudgets({ ...spec, evidenceWindowRatio: 0.9 }).evidenceBudget).toBe(14_040);
    expect(resolveBudgets({ ...spec, evidenceWindowRatio: 1 }).evidenceBudget).toBe(15_600);
    expect(resolveEvidenceBudget(7, 0.75)).toBe(5);
    expect(resolveEvidenceBudget(1, 0.9)).toBe(0);
  });
  it('B4: the ratio is the decimal it prints as (100 × 0.29 is 29, not 28.999…)', () => {
    expect(100 * 0.29).toBeLessThan(29);
    expect(resolveEvidenceBudget(100, 0.29)).toBe(29);
    expect(resolveEvidenceBudget(10, 0.7)).toBe(7);
    expect(resolveEvidenceBudget(10_000_000, 1e-7)).toBe(1);
    expect(resolveEvidenceBudget(9_999_999, 1e-7)).toBe(0);
    expect(resolveEvidenceBudget(1, Number.MIN_VALUE)).toBe(0);
  });
  it('B4: saturating — huge, negative and NaN triggers stay in [0, trigger]', () => {
    expect(resolveEvidenceBudget(MAX, 0.9)).toBe(Number((BigInt(MAX) * 9n) / 10n));
    expect(resolveEvidenceBudget(MAX, 1)).toBe(MAX);
    expect(resolveEvidenceBudget(1e300, 1)).toBe(MAX);
    expect(resolveEvidenceBudget(-5, 0.9)).toBe(0);
    expect(resolveEvidenceBudget(Number.NaN, 0.9)).toBe(0);
  });
  it('B4: a ratio outside (0, 1] means "not set" (B4 default), in budgets and in the policy', () => {
    for (const r of [0, -0.5, 1.0001, 2, Number.NaN, Infinity]) {
      expect(resolveEvidenceBudget(40_000, r)).toBe(20_000);
      expect(completeClearingPolicy({ evidenceWindowRatio: r }).evidenceWindowRatio).toBe(0.5);
    }
  });
  it('B4: opt-in ratios only ever grow the budget with the ratio (property)', () => {
    fc.assert(
      fc.property(
        fc.maxSafeNat(),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        fc.double({ min: 0.01, max: 1, noNaN: true }),
        (t, a, b) => {
          const [lo, hi] = a <= b ? [a, b] : [b, a];
          const small = resolveEvidenceBudget(t, lo);
          const large = resolveEvidenceBudget(t, hi);
          return small <= large && large <= t && Number.isSafeInteger(large);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('evidence window ratio: clearing (C2)', () => {
  // Four equal batches; clearing runs because the trigger is exactly the history's size.
  const h = deepFreeze([
    msg.user('u'),
    ...batch(['a'], 4_000),
    ...batch(['b'], 4_000),
    ...batch(['c'], 4_000),
    ...batch(['d'], 4_000),
  ]);
  const trigger = est.history(h);
  const batchCost = est.message(h[1]) + est.message(h[2]);
  /** Independent evidence-window walk: newest equal batches while the running total stays within the budget. */
  const expectedKept = (budget: number) =>
    ['a', 'b', 'c', 'd'].slice(4 - Math.min(4, Math.floor(budget / batchCost)));

  it('C2: the default (0.5) and a larger ratio keep exactly the batches their budget fits', () => {
    const limits = { trigger: trigger };
    const half = projectRequest(h, { limits, estimator: est, policy: bare });
    const wide = projectRequest(h, { limits, estimator: est, policy: { ...bare, evidenceWindowRatio: 0.9 } });
    expect(half.diagnostics.evidenceBudget).toBe(Math.floor(trigger / 2));
    expect(wide.diagnostics.evidenceBudget).toBe(Number((BigInt(trigger) * 9n) / 10n));
    expect(wide.budgets.evidenceBudget).toBe(wide.diagnostics.evidenceBudget);
    expect(keptIds(half.messages)).toEqual(expectedKept(half.diagnostics.evidenceBudget));
    expect(keptIds(wide.messages)).toEqual(expectedKept(wide.diagnostics.evidenceBudget));
    // The fixture is only meaningful if the wider window protects strictly more.
    expect(keptIds(wide.messages).length).toBeGreaterThan(keptIds(half.messages).length);
  });
  it('C2: limits.evidenceWindowRatio wins over the policy; a "not set" limit falls back to it', () => {
    const policy = { ...bare, evidenceWindowRatio: 0.9 };
    const fromLimits = projectRequest(h, {
      limits: { trigger: trigger, evidenceWindowRatio: 0.5 },
      estimator: est,
      policy,
    });
    expect(fromLimits.diagnostics.evidenceBudget).toBe(Math.floor(trigger / 2));
    const notSet = projectRequest(h, {
      limits: { trigger: trigger, evidenceWindowRatio: 0 },
      estimator: est,
      policy,
    });
    expect(notSet.diagnostics.evidenceBudget).toBe(Number((BigInt(trigger) * 9n) / 10n));
  });
  it('C2: the plain clearing pass derives its default budget from the policy ratio', () => {
    const r = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: { ...bare, evidenceWindowRatio: 0.75 },
      localTrigger: trigger,
    });
    expect(r.diagnostics.evidenceBudget).toBe(Number((BigInt(trigger) * 3n) / 4n));
    const d = clearOldToolResultsWithRecentBatches(h, {
      estimator: est,
      policy: bare,
      localTrigger: trigger,
    });
    expect(d.diagnostics.evidenceBudget).toBe(Math.floor(trigger / 2));
  });
});
