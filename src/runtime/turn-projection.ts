import type { Message } from '../messages/message.js';
import {
  cacheAwareThreshold,
  completeClearingPolicy,
  effectiveLimits,
  sharedPrefixLength,
  type Budgets,
  type ClearingPolicy,
  type ProjectedRequest,
} from '../projection/index.js';
import { DEFAULT_PROJECTION, type ProjectionFunctions, type TurnActorDeps } from './turn-actor-deps.js';

/**
 * The projection as one provided turn machine sees it. It is an object of its own because the
 * cache-aware threshold remembers the last request sent, and that memory belongs to one
 * machine's actors; it starts from the previous turn's request when the caller passes it.
 */
export interface TurnProjection {
  readonly functions: ProjectionFunctions;
  budgets(): Budgets;
  project(history: readonly Message[]): ProjectedRequest;
  /**
   * §14 fallback when the loop guard holds compaction off over the window: VT Code's clearing
   * rules (C1–C7) over the caller's policy, everything eligible at once; the caller's policy
   * as is when it turned clearing off.
   */
  projectToFit(history: readonly Message[]): ProjectedRequest;
  /** Tokens the next request carries: the projection plus the frozen prefix. */
  pressure(projectedTokens: number): number;
  /** The compaction threshold for `request`; remembers it as the last request sent. */
  threshold(b: Budgets, request: readonly Message[], promptBudget: number | null): number | null;
  /** Remembers a rebuilt projection as the last request sent. */
  remember(request: readonly Message[]): void;
}

export function createTurnProjection(
  deps: TurnActorDeps,
  previousRequest: readonly Message[] | null = null,
): TurnProjection {
  const p = deps.projection ?? DEFAULT_PROJECTION;
  const complete = completeClearingPolicy(deps.policy);
  const waitsForCacheBreak = complete.compactionWaitsForCacheBreak;
  const wait = { ratio: complete.compactionWaitRatio, maxTokens: complete.compactionWaitMaxTokens };
  // The previous request sent, for cache-aware compaction (is this request's prefix still cached?).
  let lastRequest: readonly Message[] | null = previousRequest;
  const fitPolicy: Partial<ClearingPolicy> | undefined =
    deps.policy?.enabled === false ? deps.policy : { ...deps.policy, enabled: true, clearAtLeast: 0 };
  return {
    functions: p,
    budgets: () => p.resolveBudgets(effectiveLimits(deps.limits, deps.policy)),
    project: (history) =>
      p.projectRequest(history, { limits: deps.limits, policy: deps.policy, estimator: deps.estimator }),
    projectToFit: (history) =>
      p.projectRequest(history, { limits: deps.limits, policy: fitPolicy, estimator: deps.estimator }),
    pressure: (projectedTokens) => projectedTokens + Math.max(0, deps.limits.prefixTokens ?? 0),
    threshold(b, request, promptBudget) {
      const intact = lastRequest !== null && sharedPrefixLength(lastRequest, request) === lastRequest.length;
      lastRequest = request;
      return waitsForCacheBreak
        ? cacheAwareThreshold(b.compactionThreshold, promptBudget, intact, wait)
        : b.compactionThreshold;
    },
    remember(request) {
      lastRequest = request;
    },
  };
}
