import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import {
  normalizeHistory,
  projectRequest,
  resolveBudgets,
  type Budgets,
  type ClearingPolicy,
  type Limits,
  type ProjectedRequest,
  type ProjectRequestOptions,
} from '../projection/index.js';

// Kept apart from the actors so the runner and the actors share one definition of what the
// turn needs without importing each other.

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
}
