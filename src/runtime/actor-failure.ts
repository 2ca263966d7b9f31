import type { ActorFailureKind } from '../../machines/index.js';
import { BudgetError, ContextCapacityError, EmptySummaryError } from '../providers/errors.js';
import { redact } from '../providers/redact.js';

/**
 * The error runtime actors throw so the machines can classify it (machines/shared/failure.ts):
 * `kind` says capacity / budget / provider / empty-summary, the message is bounded and secret-free.
 */
export class ActorFailureError extends Error {
  readonly kind: ActorFailureKind;
  readonly inputTokens?: number;
  constructor(
    kind: ActorFailureKind,
    message: string,
    options: { inputTokens?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'ActorFailureError';
    this.kind = kind;
    if (options.inputTokens !== undefined) this.inputTokens = options.inputTokens;
  }
}

// How deep a `cause` chain is searched (wrappers nest one or two levels; cycles stop here).
const MAX_CAUSE_DEPTH = 8;

/** True when `error` or an error in its `cause` chain is an {@link EmptySummaryError}. */
function isEmptySummary(error: unknown): boolean {
  let e: unknown = error;
  for (let depth = 0; depth < MAX_CAUSE_DEPTH; depth++) {
    if (e instanceof EmptySummaryError) return true;
    if (!(e instanceof Error)) return false;
    e = e.cause;
  }
  return false;
}

/**
 * Maps provider/summarizer errors onto {@link ActorFailureError}; abort errors pass through.
 * Capacity rejections → `capacity`, budget errors → `budget`, empty summaries (also when
 * wrapped with route diagnostics) → `empty-summary`, anything else → `provider`.
 */
export function toActorFailure(error: unknown, inputTokens?: number): unknown {
  if (error instanceof ActorFailureError) return error;
  if (error instanceof Error && error.name === 'AbortError') return error;
  const message = redact(error instanceof Error ? error.message : String(error));
  if (error instanceof ContextCapacityError)
    return new ActorFailureError('capacity', message, {
      inputTokens: error.info.inputTokens ?? inputTokens,
      cause: error,
    });
  if (error instanceof BudgetError) return new ActorFailureError('budget', message, { cause: error });
  // The summary diagnostics wrap an empty answer with the route (label, provider / model,
  // input_tokens, budget); the wrapped message keeps "provider returned an empty summary".
  if (isEmptySummary(error))
    return new ActorFailureError('empty-summary', message, { inputTokens, cause: error });
  return new ActorFailureError('provider', message, { inputTokens, cause: error });
}
