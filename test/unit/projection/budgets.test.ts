import { describe, it, expect } from '@jest/globals';
import {
  DEFAULT_ROUTE_POLICY,
  resolveBudgets,
  resolveCapacity,
  resolveRoutePolicy,
  type RoutePolicyEntry,
} from '#src/projection/index.js';

const MAX = Number.MAX_SAFE_INTEGER;

describe('budgets: capacity (B1)', () => {
  it('B1: capacity is the smaller of the positive provider limit and session ceiling', () => {
    expect(resolveCapacity(128_000, 64_000)).toBe(64_000);
    expect(resolveCapacity(32_000, 64_000)).toBe(32_000);
  });
  it('B1: a session ceiling of 0 means automatic (provider limit alone)', () => {
    expect(resolveBudgets({ capacity: 128_000, sessionCeiling: 0 }).capacity).toBe(128_000);
  });
  it('B1: a session ceiling alone is the capacity', () => {
    expect(resolveBudgets({ sessionCeiling: 50_000 }).capacity).toBe(50_000);
  });
  it('B1: neither known (or only zero/negative/NaN values) → capacity unknown', () => {
    expect(resolveBudgets({}).capacity).toBeNull();
    expect(resolveBudgets({ capacity: 0, sessionCeiling: 0 }).capacity).toBeNull();
    expect(resolveBudgets({ capacity: -5, sessionCeiling: Number.NaN }).capacity).toBeNull();
  });
  it('B1: huge values saturate at MAX_SAFE_INTEGER instead of overflowing', () => {
    const b = resolveBudgets({ capacity: 1e300, sessionCeiling: Infinity });
    expect(b.capacity).toBe(MAX);
    expect(b.localTrigger).toBe(40_000);
    expect(Number.isSafeInteger(b.historyBudget)).toBe(true);
    expect(Number.isSafeInteger(b.compactionThreshold)).toBe(true);
  });
});

describe('budgets: history budget and local trigger (B2–B4)', () => {
  it('B3: capacity 32,000, reserved 4,000, prefix 2,000 → local trigger 15,600 (B4 evidence 7,800)', () => {
    const b = resolveBudgets({ capacity: 32_000, reservedOutput: 4_000, prefixTokens: 2_000 });
    expect(b.historyBudget).toBe(26_000);
    expect(b.localTrigger).toBe(15_600);
    expect(b.evidenceBudget).toBe(7_800);
  });
  it('B3: a lower configured trigger still wins', () => {
    const b = resolveBudgets({
      capacity: 32_000,
      reservedOutput: 4_000,
      prefixTokens: 2_000,
      trigger: 10_000,
    });
    expect(b.localTrigger).toBe(10_000);
    expect(b.evidenceBudget).toBe(5_000);
  });
  it('B3: one token of configured trigger above/below the cap', () => {
    const base = { capacity: 32_000, reservedOutput: 4_000, prefixTokens: 2_000 };
    expect(resolveBudgets({ ...base, trigger: 15_599 }).localTrigger).toBe(15_599);
    expect(resolveBudgets({ ...base, trigger: 15_600 }).localTrigger).toBe(15_600);
    expect(resolveBudgets({ ...base, trigger: 15_601 }).localTrigger).toBe(15_600);
  });
  it('B3: unknown capacity keeps the configured trigger; B4 default evidence is 20,000', () => {
    expect(resolveBudgets({ trigger: 12_345, reservedOutput: 4_000 }).localTrigger).toBe(12_345);
    const d = resolveBudgets({});
    expect(d.localTrigger).toBe(40_000);
    expect(d.evidenceBudget).toBe(20_000);
    expect(d.historyBudget).toBeNull();
  });
  it('B2: subtractions saturate at 0 and B3 keeps the trigger at least 1', () => {
    const b = resolveBudgets({ capacity: 1_000, reservedOutput: 900, prefixTokens: 500 });
    expect(b.historyBudget).toBe(0);
    expect(b.localTrigger).toBe(1);
    expect(b.evidenceBudget).toBe(0);
  });
  it('B2: the session ceiling intersects before subtraction', () => {
    const b = resolveBudgets({
      capacity: 200_000,
      sessionCeiling: 32_000,
      reservedOutput: 4_000,
      prefixTokens: 2_000,
    });
    expect(b.historyBudget).toBe(26_000);
    expect(b.localTrigger).toBe(15_600);
  });
  it('B3: huge history budgets are computed exactly (no float rounding above 2^53)', () => {
    const b = resolveBudgets({ capacity: MAX, trigger: MAX });
    expect(b.localTrigger).toBe(Number((BigInt(MAX) * 3n) / 5n));
  });
});

describe('budgets: compaction threshold (H5, P1)', () => {
  // VT Code's values (reserve 4,096 interactive / 2,000 headless).
  it.each([
    [32_000, 4_096, 20_928],
    [32_000, 2_000, 22_500],
    [64_000, 4_096, 44_928],
    [128_000, 2_000, 94_500],
    [1_000_000, 4_096, 746_928],
  ])('H5: capacity %i, reserve %i → threshold %i', (cap, reserve, expected) => {
    expect(resolveBudgets({ capacity: cap, reservedOutput: reserve }).compactionThreshold).toBe(expected);
  });
  it('H5: an explicit threshold wins, capped at the prompt budget', () => {
    const base = { capacity: 32_000, reservedOutput: 4_000 };
    expect(resolveBudgets({ ...base, threshold: 10_000 }).compactionThreshold).toBe(10_000);
    expect(resolveBudgets({ ...base, threshold: 30_000 }).compactionThreshold).toBe(28_000);
  });
  it('H5: reserve larger than capacity leaves a prompt budget of 1', () => {
    expect(resolveBudgets({ capacity: 100, reservedOutput: 4_096 }).compactionThreshold).toBe(1);
  });
  it('H5: unknown capacity → explicit threshold as is, else null', () => {
    expect(resolveBudgets({ threshold: 5_000 }).compactionThreshold).toBe(5_000);
    expect(resolveBudgets({}).compactionThreshold).toBeNull();
  });
  it('P1: a route thresholdRatio below 1 only lowers the threshold', () => {
    const base = { capacity: 32_000, reservedOutput: 4_096 };
    expect(resolveBudgets({ ...base, routePolicy: { thresholdRatio: 0.5 } }).compactionThreshold).toBe(
      16_000,
    );
    expect(resolveBudgets({ ...base, routePolicy: { thresholdRatio: 0.9 } }).compactionThreshold).toBe(
      20_928,
    );
    expect(resolveBudgets({ ...base, routePolicy: { thresholdRatio: 3 } }).compactionThreshold).toBe(20_928);
  });
});

describe('budgets: summary input budget (L1) and continuity tail (L7)', () => {
  it.each([
    [32_000, 27_488],
    [65_536, 56_832],
    [128_000, 111_488],
    [1_000_000, 874_488],
  ])('L1: window %i keeps floor(W/8)+512 headroom → %i', (cap, expected) => {
    expect(resolveBudgets({ capacity: cap }).summaryInputBudget).toBe(expected);
  });
  it('L1: prefix, explicit summary output limit and instructions all consume the allowance', () => {
    const b = resolveBudgets({
      capacity: 32_000,
      prefixTokens: 2_000,
      summaryOutputLimit: 1_000,
      summaryInstructionsTokens: 500,
    });
    expect(b.summaryInputBudget).toBe(27_488 - 3_500);
  });
  it('L1: the session ceiling intersects the window; unknown capacity → null; tiny windows saturate at 0', () => {
    expect(resolveBudgets({ capacity: 200_000, sessionCeiling: 32_000 }).summaryInputBudget).toBe(27_488);
    expect(resolveBudgets({ prefixTokens: 10 }).summaryInputBudget).toBeNull();
    expect(resolveBudgets({ capacity: 500 }).summaryInputBudget).toBe(0);
  });
  it.each([
    [4_000, 1_024],
    [32_000, 5_120],
    [65_536, 10_485],
    [125_000, 20_000],
    [1_000_000, 20_000],
  ])('L7: window %i → continuity tail %i (min 20,000, floor 1,024)', (cap, expected) => {
    expect(resolveBudgets({ capacity: cap }).continuityTailTokens).toBe(expected);
  });
  it('L7: retainRatio from the route policy scales the tail; unknown window → null', () => {
    expect(resolveBudgets({ capacity: 32_000, routePolicy: { retainRatio: 0.5 } }).continuityTailTokens).toBe(
      16_000,
    );
    expect(resolveBudgets({}).continuityTailTokens).toBeNull();
  });
});

describe('route policy (P1)', () => {
  it('P1: the built-in table is empty, so every route gets the defaults', () => {
    expect(resolveRoutePolicy('anthropic', 'claude-opus-4-5')).toEqual(DEFAULT_ROUTE_POLICY);
    expect(DEFAULT_ROUTE_POLICY).toEqual({ thresholdRatio: 1.0, retainRatio: 0.16, maxOverflowRetries: 1 });
  });
  it('P1: the first entry whose provider and model substrings match wins (case-insensitive)', () => {
    const table: RoutePolicyEntry[] = [
      { provider: 'deepseek', model: 'reasoner', policy: { thresholdRatio: 0.8 } },
      { provider: 'DeepSeek', model: '', policy: { retainRatio: 0.1, maxOverflowRetries: 3 } },
    ];
    expect(resolveRoutePolicy('deepseek', 'deepseek-reasoner', table)).toEqual({
      thresholdRatio: 0.8,
      retainRatio: 0.16,
      maxOverflowRetries: 1,
    });
    expect(resolveRoutePolicy('my-deepseek-proxy', 'deepseek-chat', table)).toEqual({
      thresholdRatio: 1,
      retainRatio: 0.1,
      maxOverflowRetries: 3,
    });
    expect(resolveRoutePolicy('openai', 'gpt-5', table)).toEqual(DEFAULT_ROUTE_POLICY);
  });
});
