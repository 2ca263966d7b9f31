import type { Message } from '../../messages/message.js';
import {
  stepwiseClearing,
  type Budgets,
  type ProjectedRequest,
  fitToWindow,
  type FittedRequest,
  normalizeHistory,
  normalizeWithPairing,
  projectNormalized,
  projectRequest,
  resolveBudgets,
  type Limits,
  type ProjectRequestOptions,
} from '../../projection/index.js';
import type { Estimator } from '../../estimate/estimator.js';
import type { ResolvedConfig } from '../resolved-config.js';

/** The pure projection functions the turn uses (default: src/projection). */
export interface ProjectionFunctions {
  normalizeHistory(history: readonly Message[]): readonly Message[];
  projectRequest(history: readonly Message[], opts: ProjectRequestOptions): ProjectedRequest;
  resolveBudgets(limits: Limits): Budgets;
}

/** The real projection functions (N, B, C). */
export const DEFAULT_PROJECTION: ProjectionFunctions = { normalizeHistory, projectRequest, resolveBudgets };

/** What the turn's own actors need: the estimator and the settings resolved once. */
export interface TurnActorDeps {
  estimator: Estimator;
  config: ResolvedConfig;
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
  project(history: readonly Message[], keepCleared: readonly string[]): ProjectedRequest;
  /**
   * The request built from `history` made to fit `pressureTokens` (the prompt budget): clearing,
   * then previews, then older exchanges left out; with `clearingOnly`, clearing alone.
   */
  fit(
    history: readonly Message[],
    pressureTokens: number,
    keepCleared: readonly string[],
    clearingOnly?: boolean,
  ): FittedRequest;
  /** Tokens the next request carries: the projection plus the frozen prefix. */
  pressure(projectedTokens: number): number;
}

/** The turn's projection over the resolved settings, used as given. */
export function createTurnProjection(deps: TurnActorDeps): TurnProjection {
  const p = DEFAULT_PROJECTION;
  const { limits, policy, budgets } = deps.config;
  const prefix = Math.max(0, limits.prefixTokens ?? 0);
  // Between steps a stepwise policy clears nothing new; the machine says which results stay cleared.
  const { between } = stepwiseClearing(policy);
  const own = (keep: readonly string[]) => ({
    limits,
    estimator: deps.estimator,
    ...(keep.length > 0 ? { keepCleared: new Set(keep) } : {}),
  });
  // What normalizing found, by the array it returned; the store never changes an array it holds.
  const normalized = new WeakMap<readonly Message[], ReturnType<typeof normalizeWithPairing>>();
  return {
    functions: p,
    budgets: () => budgets,
    normalize(history) {
      const done = normalizeWithPairing(history);
      normalized.set(done.messages, done);
      return done.messages;
    },
    project(history, keep) {
      const opts = { ...own(keep), policy: between };
      const done = normalized.get(history);
      return done ? projectNormalized(done, opts) : p.projectRequest(history, opts);
    },
    fit: (history, pressureTokens, keep, clearingOnly) =>
      fitToWindow(history, {
        ...own(keep),
        budgetTokens: Math.max(0, pressureTokens - prefix),
        policy,
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
