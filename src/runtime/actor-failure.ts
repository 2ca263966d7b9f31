import { ActorFailureError, BudgetError, ContextCapacityError, EmptySummaryError } from '../core/errors.js';
import { redact } from '../providers/redact.js';

// How deep a `cause` chain is searched (wrappers nest one or two levels; cycles stop here).
const MAX_CAUSE_DEPTH = 8;

/** True when `error` or an error in its `cause` chain is an {@link EmptySummaryError}. */
function isEmptySummary(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) {
    if (EmptySummaryError.isInstance(e)) return true;
    if (!(e instanceof Error)) return false;
    e = e.cause;
  }
  return false;
}

/**
 * Maps provider/summarizer errors onto {@link ActorFailureError}; abort errors pass through.
 * Capacity rejections → `capacity` (retried with a halved budget), budget errors → `budget`, empty
 * summaries (also when wrapped with route diagnostics) → `empty-summary`, anything else → `provider`.
 */
export function toActorFailure(error: unknown, inputTokens?: number): unknown {
  if (ActorFailureError.isInstance(error)) return error;
  if (error instanceof Error && error.name === 'AbortError') return error;
  const message = redact(error instanceof Error ? error.message : String(error));
  if (ContextCapacityError.isInstance(error))
    return new ActorFailureError('capacity', message, {
      inputTokens: error.info.inputTokens ?? inputTokens,
      cause: error,
    });
  if (BudgetError.isInstance(error)) return new ActorFailureError('budget', message, { cause: error });
  // The summary diagnostics wrap an empty answer with the route (label, provider / model,
  // input_tokens, budget); the wrapped message keeps "provider returned an empty summary".
  if (isEmptySummary(error))
    return new ActorFailureError('empty-summary', message, { inputTokens, cause: error });
  return new ActorFailureError('provider', message, { inputTokens, cause: error });
}
