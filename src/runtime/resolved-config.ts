import { DEFAULT_LOOP_GUARD_POLICY, type LoopGuardPolicy, type TurnPolicy } from '../../machines/index.js';
import { reservedOutputOf } from '../projection/budgets.js';
import type { ClearingPolicy } from '../projection/clearing-policy.js';
import type { RoutePolicy } from '../projection/route-policy.js';
import {
  resolveSettings,
  type CompactionSettings,
  type SessionConfig,
  type SessionLimits,
} from '../projection/session-settings.js';
import { defaultSummaryOutputTokens } from '../summary/request-fit.js';

/**
 * The settings resolved once and frozen: the limits, the whole clearing policy, the compaction
 * settings with the wait filled in, the budgets, the numbers every turn decides by
 * (`turn`) and the loop guard's limits. The runner and its actors take nothing else.
 */
export type ResolvedConfig = Readonly<
  SessionConfig & { turn: Readonly<TurnPolicy>; loopGuard: Readonly<LoopGuardPolicy> }
>;

/** The numbers a turn decides by, from settings already resolved. */
function turnPolicyOf(settings: SessionConfig): TurnPolicy {
  const { budgets: b, limits, compaction: wait, policy } = settings;
  return {
    thresholdTokens: b.compactionThreshold,
    promptBudgetTokens: b.capacity === null ? null : Math.max(b.capacity - reservedOutputOf(limits), 0),
    summaryInputBudget: b.summaryInputBudget,
    prefixTokens: Math.max(0, limits.prefixTokens ?? 0),
    continuityTailTokens: b.continuityTailTokens ?? 0,
    // A pass is expected to write a summary of the default output size.
    summaryTokens: defaultSummaryOutputTokens(b.capacity) ?? 0,
    waitsForCacheBreak: wait.waitsForCacheBreak,
    waitByCost: wait.waitByCost,
    wait: { ratio: wait.waitRatio, maxTokens: wait.waitMaxTokens },
    clearsEachTurn: policy.enabled && policy.clearAtLeast <= 0,
  };
}

/** Freezes a plain settings object and everything in it. */
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * The one place settings are resolved for a run: the session calls it with its options, its
 * route's window and route policy and the envelope's prefix; a caller of the runner does the
 * same. Partial settings stop here.
 */
export function resolveRunConfig(
  /** The settings as given (all optional). */
  input: {
    limits?: SessionLimits;
    policy?: Partial<ClearingPolicy>;
    compaction?: CompactionSettings;
    loopGuard?: Partial<LoopGuardPolicy>;
  },
  /** The route's window, the envelope's estimated prefix and the route's compaction tuning. */
  route?: { contextWindow?: number | null; prefixTokens?: number; routePolicy?: RoutePolicy },
): Readonly<SessionConfig & { turn: Readonly<TurnPolicy>; loopGuard: Readonly<LoopGuardPolicy> }> {
  const settings = resolveSettings(input, route);
  const loopGuard = { ...DEFAULT_LOOP_GUARD_POLICY, ...input.loopGuard };
  return deepFreeze({ ...settings, turn: turnPolicyOf(settings), loopGuard });
}
