import { describe, expect, it } from '@jest/globals';
import { DEFAULT_LOOP_GUARD_POLICY } from '#machines/index.js';
import { completeClearingPolicy, resolveRoutePolicy } from '#src/projection/index.js';
import { resolveRunConfig } from '#src/runtime/index.js';
import { createCompactorSession } from '#src/session/index.js';

/** Whether every object inside `value` is frozen. */
function deeplyFrozen(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return true;
  return Object.isFrozen(value) && Object.values(value).every(deeplyFrozen);
}

describe('settings resolved once (resolveRunConfig)', () => {
  it('B1–B3/P1: a partial clearing policy comes out complete, the budgets and the turn policy from the same limits, all frozen', () => {
    const config = resolveRunConfig({
      limits: { capacity: 20_000, reservedOutput: 2_000 },
      policy: { preset: 'vtcode', keepToolUses: 5 },
      compaction: { maxOverflowRetries: 3 },
    });
    expect(config.policy).toEqual(completeClearingPolicy({ preset: 'vtcode', keepToolUses: 5 }));
    expect(config.limits.capacity).toBe(20_000);
    expect(config.limits.routePolicy?.maxOverflowRetries).toBe(3);
    expect(config.budgets.capacity).toBe(20_000);
    expect(config.turn.thresholdTokens).toBe(config.budgets.compactionThreshold);
    expect(config.turn.promptBudgetTokens).toBe(18_000);
    // The preset's compaction wait is filled in (VT Code compacts at the threshold).
    expect(config.compaction.waitsForCacheBreak).toBe(false);
    expect(config.turn.waitsForCacheBreak).toBe(false);
    expect(deeplyFrozen(config)).toBe(true);
  });

  it('P1: a partial loop guard policy comes out complete (the defaults filled in) and frozen', () => {
    const config = resolveRunConfig({ loopGuard: { maxConsecutiveFailures: 5 } });
    expect(config.loopGuard).toEqual({ ...DEFAULT_LOOP_GUARD_POLICY, maxConsecutiveFailures: 5 });
    expect(resolveRunConfig({}).loopGuard).toEqual(DEFAULT_LOOP_GUARD_POLICY);
    expect(Object.isFrozen(config.loopGuard)).toBe(true);
  });

  it('P1: the session resolves its settings with the same function: same options, same configuration', () => {
    const options = {
      limits: { capacity: 20_000, reservedOutput: 2_000, prefixTokens: 0 },
      policy: { keepToolUses: 5 },
      compaction: { waitRatio: 0.25 },
    };
    const session = createCompactorSession(options);
    const route = {
      contextWindow: session.route.contextWindow,
      routePolicy: resolveRoutePolicy(session.route.provider, session.route.model),
    };
    expect(session.config).toEqual(resolveRunConfig(options, route));
    session.close();
  });
});
