import type { SentRequest, TurnPolicy } from '../../../machines/index.js';
import type { Message } from '../../messages/message.js';
import { defaultSummaryOutputTokens } from '../../summary/request-fit.js';
import {
  stepwiseClearing,
  completeCompactionWait,
  completeClearingPolicy,
  effectiveLimits,
  type Budgets,
  type ClearingPolicy,
  type CompactionWaitSettings,
  type ProjectedRequest,
  fitToWindow,
  type FittedRequest,
  normalizeHistory,
  normalizeWithPairing,
  projectNormalized,
  projectRequest,
  reservedOutputOf,
  resolveBudgets,
  type Limits,
  type ProjectRequestOptions,
} from '../../projection/index.js';
import type { Estimator } from '../../estimate/estimator.js';
import { keptCleared } from './sent-request.js';

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
 * The numbers a turn decides by, from the settings: the threshold and budgets of the limits,
 * what a pass is expected to leave, and the compaction wait (the preset's where not given).
 */
export function resolveTurnPolicy(deps: Omit<TurnActorDeps, 'estimator'>): TurnPolicy {
  const b = resolveBudgets(effectiveLimits(deps.limits, deps.policy));
  const wait = completeCompactionWait(deps.compactionWait, completeClearingPolicy(deps.policy).preset);
  return {
    thresholdTokens: b.compactionThreshold,
    promptBudgetTokens: b.capacity === null ? null : Math.max(b.capacity - reservedOutputOf(deps.limits), 0),
    summaryInputBudget: b.summaryInputBudget,
    prefixTokens: Math.max(0, deps.limits.prefixTokens ?? 0),
    continuityTailTokens: b.continuityTailTokens ?? 0,
    // A pass is expected to write a summary of the default output size.
    summaryTokens: defaultSummaryOutputTokens(b.capacity) ?? 0,
    waitsForCacheBreak: wait.waitsForCacheBreak,
    waitByCost: wait.waitByCost,
    wait: { ratio: wait.waitRatio, maxTokens: wait.waitMaxTokens },
  };
}

/**
 * The projection as the turn's actors use it: pure functions of the history, the settings and
 * the last request sent (which the machine keeps and passes in).
 */
export interface TurnProjection {
  readonly functions: ProjectionFunctions;
  budgets(): Budgets;
  /** Repairs pairing; projecting the result next reuses the analysis (a turn normalizes once). */
  normalize(history: readonly Message[]): readonly Message[];
  project(history: readonly Message[], sent: SentRequest | null): ProjectedRequest;
  /**
   * The request built from `history` made to fit `pressureTokens` (the prompt budget): clearing,
   * then previews, then older exchanges left out; with `clearingOnly`, clearing alone.
   */
  fit(
    history: readonly Message[],
    pressureTokens: number,
    sent: SentRequest | null,
    clearingOnly?: boolean,
  ): FittedRequest;
  /** Tokens the next request carries: the projection plus the frozen prefix. */
  pressure(projectedTokens: number): number;
}

/** The turn's projection over `deps`; `budgets`, when the caller resolved them already, are used as given. */
export function createTurnProjection(deps: TurnActorDeps, budgets?: Budgets): TurnProjection {
  const p = DEFAULT_PROJECTION;
  const prefix = Math.max(0, deps.limits.prefixTokens ?? 0);
  // Clearing in steps keeps what the request sent last cleared, so requests grow unchanged between steps.
  const { sticky, between } = stepwiseClearing(deps.policy);
  const own = (sent: SentRequest | null) => ({
    limits: deps.limits,
    estimator: deps.estimator,
    ...keptCleared(sticky, sent),
  });
  // What normalizing found, by the array it returned; the store never changes an array it holds.
  const normalized = new WeakMap<readonly Message[], ReturnType<typeof normalizeWithPairing>>();
  return {
    functions: p,
    budgets: () => budgets ?? p.resolveBudgets(effectiveLimits(deps.limits, deps.policy)),
    normalize(history) {
      const done = normalizeWithPairing(history);
      normalized.set(done.messages, done);
      return done.messages;
    },
    project(history, sent) {
      const opts = { ...own(sent), policy: between };
      const done = normalized.get(history);
      return done ? projectNormalized(done, opts) : p.projectRequest(history, opts);
    },
    fit: (history, pressureTokens, sent, clearingOnly) =>
      fitToWindow(history, {
        ...own(sent),
        budgetTokens: Math.max(0, pressureTokens - prefix),
        policy: deps.policy,
        clearingOnly,
      }),
    pressure: (projectedTokens) => projectedTokens + prefix,
  };
}

/**
 * Tokens of the newest step of an agent loop: the last message that is not a tool result, with
 * the tool results after it (an assistant call and its outputs, or one user message).
 */
export function newestStepTokens(request: readonly Message[], est: Estimator): number {
  let i = request.length - 1;
  while (i >= 0 && request[i].role === 'tool') i--;
  return i < 0 ? 0 : est.history(request.slice(i));
}
