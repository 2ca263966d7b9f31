import type { ActorFailureKind } from '../../machines/index.js';
import { BudgetError, ContextCapacityError } from '../providers/errors.js';
import { redact } from '../providers/redact.js';

/**
 * The error runtime actors throw so the machines can classify it (machines/shared/failure.ts):
 * `kind` says capacity / budget / provider, the message is bounded and secret-free (S4).
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

/** Maps provider/summarizer errors onto {@link ActorFailureError}; abort errors pass through. */
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
  return new ActorFailureError('provider', message, { inputTokens, cause: error });
}
