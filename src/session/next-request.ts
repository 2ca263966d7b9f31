import { isOverPromptBudget } from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import { anchoredPressure, type UsageAnchor } from '../estimate/usage-anchor.js';
import type { Message } from '../messages/message.js';
import { fitToWindow, projectRequest, type ProjectedRequest } from '../projection/index.js';
import { checkFixedPartFits } from '../runtime/index.js';
import type { ResolvedSessionConfig } from './config.js';
import type { PrepareRequestOptions, PreparedRequest } from './session-types.js';

/** The request the last turn built, and the history it was built from. */
export interface TurnRequestMemo {
  history: readonly Message[];
  request: readonly Message[];
}

/**
 * The next request of a session, by one rule: right after a turn it is the turn's own request
 * (the turn machine decided it; nothing is projected again); after new messages, the projection,
 * made to fit the prompt budget by the same decision a turn makes. So the session API and every
 * adapter hand the model the same request. The clearing diagnostics of a turn's own request are
 * projected only when they are read.
 */
export function prepareNextRequest(args: {
  history: readonly Message[];
  config: ResolvedSessionConfig;
  estimator: Estimator;
  anchor: UsageAnchor | undefined;
  lastTurn: TurnRequestMemo | undefined;
  options: PrepareRequestOptions;
}): PreparedRequest {
  const { history, config, estimator, options } = args;
  const { limits, policy } = config;
  let projection: ProjectedRequest | undefined;
  const project = () =>
    (projection ??= projectRequest(history, {
      limits,
      policy,
      estimator,
      interactive: options.interactive,
      nativeContextEdits: options.nativeContextEdits,
    }));
  const plain = options.interactive !== true && options.nativeContextEdits !== true;
  const messages =
    plain && args.lastTurn?.history === history
      ? args.lastTurn.request
      : fitted(history, project().messages, config, estimator);
  const pressure = anchoredPressure(messages, estimator, limits.prefixTokens ?? 0, args.anchor);
  return {
    messages,
    get diagnostics() {
      return project().diagnostics;
    },
    budgets: config.budgets,
    pressure,
  };
}

/** The projection, made to fit the prompt budget when it is over (the turn's `isOverPromptBudget`). */
function fitted(
  history: readonly Message[],
  projection: readonly Message[],
  { limits, policy, budgets, turn }: ResolvedSessionConfig,
  estimator: Estimator,
): readonly Message[] {
  checkFixedPartFits(history, limits, budgets.capacity, estimator);
  const budget = turn.promptBudgetTokens;
  if (budget === null || !isOverPromptBudget(estimator.history(projection) + turn.prefixTokens, budget))
    return projection;
  return fitToWindow(history, {
    budgetTokens: Math.max(0, budget - turn.prefixTokens),
    limits,
    policy,
    estimator,
  }).messages;
}
