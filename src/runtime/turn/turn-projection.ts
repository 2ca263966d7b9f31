import type { Message } from '../../messages/message.js';
import { defaultSummaryOutputTokens } from '../../summary/request-fit.js';
import {
  cacheAwareThreshold,
  keepClearedOf,
  stepwiseClearing,
  completeClearingPolicy,
  completeCompactionWait,
  cycleAfterPass,
  firstCacheCycle,
  nextCacheCycle,
  waitCanPay,
  type CacheCycle,
  effectiveLimits,
  sharedPrefixLength,
  type Budgets,
  type ClearingPolicy,
  type CompactionWaitSettings,
  type ProjectedRequest,
  fitToWindow,
  type FittedRequest,
  normalizeHistory,
  projectRequest,
  resolveBudgets,
  type Limits,
  type ProjectRequestOptions,
} from '../../projection/index.js';
import type { Estimator } from '../../estimate/estimator.js';

/** The pure projection functions the turn uses (default: src/projection). */
export interface ProjectionFunctions {
  normalizeHistory(history: readonly Message[]): readonly Message[];
  projectRequest(history: readonly Message[], opts: ProjectRequestOptions): ProjectedRequest;
  resolveBudgets(limits: Limits): Budgets;
}

/** The real projection functions (N, B, C). */
export const DEFAULT_PROJECTION: ProjectionFunctions = { normalizeHistory, projectRequest, resolveBudgets };

/** What the turn's own actors need. */
export interface TurnActorDeps {
  estimator: Estimator;
  limits: Limits;
  policy?: Partial<ClearingPolicy>;
  /** How far compaction waits while the prompt cache holds (missing fields: the preset's). */
  compactionWait?: Partial<CompactionWaitSettings>;
}

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
   * Fallback when the loop guard holds compaction off over the window: VT Code's clearing
   * rules over the caller's policy, everything eligible at once; the caller's policy
   * as is when it turned clearing off.
   */
  projectToFit(history: readonly Message[]): ProjectedRequest;
  /**
   * The request built from `history` made to fit `pressureTokens` (the prompt budget): clearing,
   * then previews, then older exchanges left out; with `clearingOnly`, clearing alone.
   */
  fit(history: readonly Message[], pressureTokens: number, clearingOnly?: boolean): FittedRequest;
  /**
   * How many turns of growth like the newest step of `request` a summary pass would buy: the room
   * between what a pass leaves (summary, continuity tail, prefix) and the threshold; null when unknown.
   */
  turnsPerPass(b: Budgets, request: readonly Message[], threshold: number | null): number | null;
  /** Tokens the next request carries: the projection plus the frozen prefix. */
  pressure(projectedTokens: number): number;
  /** The compaction threshold for `request` (of `pressure` tokens); remembers it as the last request sent. */
  threshold(
    b: Budgets,
    request: readonly Message[],
    promptBudget: number | null,
    pressure: number,
  ): number | null;
  /** Remembers a rebuilt projection as the last request sent. */
  remember(request: readonly Message[]): void;
  /** A compaction pass ran; its rebuilt request has `pressure` tokens. */
  compacted(pressure: number): void;
  /** The prompt cache's cycle after this turn's requests (null before any), for the next turn. */
  cacheCycle(): CacheCycle | null;
}

export function createTurnProjection(
  deps: TurnActorDeps,
  previousRequest: readonly Message[] | null = null,
  previousCycle: CacheCycle | null = null,
): TurnProjection {
  const p = DEFAULT_PROJECTION;
  const settings = completeCompactionWait(deps.compactionWait, completeClearingPolicy(deps.policy).preset);
  const waitsForCacheBreak = settings.waitsForCacheBreak;
  const byCost = settings.waitByCost;
  const wait = { ratio: settings.waitRatio, maxTokens: settings.waitMaxTokens };
  // The previous request sent, for cache-aware compaction (is this request's prefix still cached?).
  let lastRequest: readonly Message[] | null = previousRequest;
  // Since the cache was last rewritten, for the wait by expected cost (carried from turn to turn).
  let cycle = previousCycle;
  const prefix = Math.max(0, deps.limits.prefixTokens ?? 0);
  // Clearing in steps keeps what the request sent last cleared, so requests grow unchanged between steps.
  const { sticky, between } = stepwiseClearing(deps.policy);
  const own = () => ({
    limits: deps.limits,
    estimator: deps.estimator,
    ...keepClearedOf(sticky, lastRequest),
  });
  const fitPolicy: Partial<ClearingPolicy> | undefined =
    deps.policy?.enabled === false ? deps.policy : { ...deps.policy, enabled: true, clearAtLeast: 0 };
  return {
    functions: p,
    budgets: () => p.resolveBudgets(effectiveLimits(deps.limits, deps.policy)),
    project: (history) => p.projectRequest(history, { ...own(), policy: between }),
    projectToFit: (history) =>
      p.projectRequest(history, { limits: deps.limits, policy: fitPolicy, estimator: deps.estimator }),
    fit: (history, pressureTokens, clearingOnly) =>
      fitToWindow(history, {
        ...own(),
        budgetTokens: Math.max(0, pressureTokens - prefix),
        policy: deps.policy,
        clearingOnly,
      }),
    turnsPerPass: (b, request, threshold) => turnsPerPass(b, request, threshold, prefix, deps.estimator),
    pressure: (projectedTokens) => projectedTokens + prefix,
    threshold(b, request, promptBudget, pressure) {
      const intact = lastRequest !== null && sharedPrefixLength(lastRequest, request) === lastRequest.length;
      lastRequest = request;
      // A pass is expected to write a summary of the default output size and keep the continuity tail.
      const summary = defaultSummaryOutputTokens(b.capacity) ?? 0;
      cycle = nextCacheCycle(
        cycle ?? firstCacheCycle((b.continuityTailTokens ?? 0) + summary),
        intact,
        pressure,
      );
      const threshold = b.compactionThreshold;
      if (!waitsForCacheBreak || threshold === null) return threshold;
      if (byCost && !waitCanPay(cycle, threshold, summary)) return threshold;
      return cacheAwareThreshold(threshold, promptBudget, intact, wait);
    },
    remember(request) {
      lastRequest = request;
    },
    compacted(pressure) {
      cycle = cycleAfterPass(pressure);
    },
    cacheCycle: () => cycle,
  };
}

/** See {@link TurnProjection.turnsPerPass}. */
function turnsPerPass(
  b: Budgets,
  request: readonly Message[],
  threshold: number | null,
  prefix: number,
  est: TurnActorDeps['estimator'],
): number | null {
  if (threshold === null || b.capacity === null) return null;
  const step = newestStepTokens(request, est);
  if (step <= 0) return null;
  const left = (b.continuityTailTokens ?? 0) + (defaultSummaryOutputTokens(b.capacity) ?? 0) + prefix;
  // A window too small for a pass to leave room at all says nothing about steps.
  return left >= threshold ? null : (threshold - left) / step;
}

/**
 * Tokens of the newest step of an agent loop: the last message that is not a tool result, with
 * the tool results after it (an assistant call and its outputs, or one user message).
 */
function newestStepTokens(request: readonly Message[], est: TurnActorDeps['estimator']): number {
  let i = request.length - 1;
  while (i >= 0 && request[i].role === 'tool') i--;
  return i < 0 ? 0 : est.history(request.slice(i));
}
