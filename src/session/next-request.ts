import type { Estimator } from '../estimate/estimator.js';
import { anchoredPressure, type UsageAnchor } from '../estimate/usage-anchor.js';
import type { Message } from '../messages/message.js';
import { fitToWindow, projectRequest, reservedOutputOf } from '../projection/index.js';
import { checkFixedPartFits } from '../runtime/index.js';
import type { SessionConfig } from './config.js';
import type { PrepareRequestOptions, PreparedRequest } from './session-types.js';

/** The request the last turn built, and the history it was built from. */
export interface TurnRequestMemo {
  history: readonly Message[];
  request: readonly Message[];
}

/**
 * The next request of a session, by one rule: right after a turn it is the turn's own request
 * (the turn machine decided it); after new messages, the projection, made to fit the prompt
 * budget the same way a turn would when it is over. So the session API and every adapter hand
 * the model the same request.
 */
export function prepareNextRequest(args: {
  history: readonly Message[];
  config: SessionConfig;
  estimator: Estimator;
  anchor: UsageAnchor | undefined;
  lastTurn: TurnRequestMemo | undefined;
  options: PrepareRequestOptions;
}): PreparedRequest {
  const { history, config, estimator, options } = args;
  const { limits, policy } = config;
  const projected = projectRequest(history, {
    limits,
    policy,
    estimator,
    interactive: options.interactive,
    nativeContextEdits: options.nativeContextEdits,
  });
  const plain = options.interactive !== true && options.nativeContextEdits !== true;
  const messages =
    plain && args.lastTurn?.history === history
      ? args.lastTurn.request
      : fitted(history, projected.messages, config, estimator);
  return {
    messages,
    diagnostics: projected.diagnostics,
    budgets: projected.budgets,
    pressure: anchoredPressure(messages, estimator, limits.prefixTokens ?? 0, args.anchor),
  };
}

function fitted(
  history: readonly Message[],
  projection: readonly Message[],
  { limits, policy, budgets }: SessionConfig,
  estimator: Estimator,
): readonly Message[] {
  const { capacity } = budgets;
  if (capacity === null) return projection;
  checkFixedPartFits(history, limits, capacity, estimator);
  const budget = Math.max(0, capacity - reservedOutputOf(limits) - (limits.prefixTokens ?? 0));
  if (estimator.history(projection) <= budget) return projection;
  return fitToWindow(history, { budgetTokens: budget, limits, policy, estimator }).messages;
}
