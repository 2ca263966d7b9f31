/**
 * Failures as the machines see them: a small closed set of reasons plus a bounded,
 * already-redacted message. Actor implementations in src/runtime throw errors carrying a
 * `kind` (see {@link ActorFailureKind}); the machines classify them with pure guards.
 */

/**
 * What an actor implementation may report in a thrown error's `kind` field. `empty-summary`
 * is a provider answer with no text: a failure of its own, never retried.
 */
export type ActorFailureKind = 'capacity' | 'budget' | 'provider' | 'empty-summary';

/** The shape of an error thrown by a runtime actor (extra fields are ignored). */
export interface ActorFailureShape {
  kind?: ActorFailureKind;
  message?: string;
  /** Input tokens of the failing attempt (with an unknown window the retry budget is half of it). */
  inputTokens?: number;
}

/** Why a summary or a compaction failed. */
export type FailureReason =
  | 'budget'
  | 'capacity-exhausted'
  | 'cannot-shrink'
  | 'empty-summary'
  | 'provider-error'
  | 'summary-truncated'
  | 'summary-template-less'
  | 'summary-larger-than-input'
  | 'rebuild-error'
  | 'internal';

/** A recorded failure: JSON-safe, bounded, kept in context and reported in outputs. */
export interface Failure {
  reason: FailureReason;
  message: string;
  inputTokens?: number;
  budget?: number | null;
}

/** Longest error text anywhere: a failure kept in context, a provider's cause, a root cause shown to the user. */
export const MAX_FAILURE_MESSAGE_CHARS = 300;

function bounded(text: string): string {
  return text.length <= MAX_FAILURE_MESSAGE_CHARS ? text : `${text.slice(0, MAX_FAILURE_MESSAGE_CHARS - 1)}…`;
}

/** Reads the `kind` of a thrown actor error, if it has one. */
export function failureKindOf(error: unknown): ActorFailureKind | undefined {
  if (typeof error !== 'object' || error === null || !('kind' in error)) return undefined;
  const kind = (error as ActorFailureShape).kind;
  return kind === 'capacity' || kind === 'budget' || kind === 'provider' || kind === 'empty-summary'
    ? kind
    : undefined;
}

/** Reads `inputTokens` of a thrown actor error, if it is a finite non-negative number. */
export function failureInputTokensOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null || !('inputTokens' in error)) return undefined;
  const n = (error as ActorFailureShape).inputTokens;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? Math.floor(n) : undefined;
}

/** The failure reason of an actor error that is no capacity rejection (an empty summary stays empty). */
export function nonCapacityReasonOf(error: unknown): FailureReason {
  const kind = failureKindOf(error);
  return kind === 'budget' ? 'budget' : kind === 'empty-summary' ? 'empty-summary' : 'provider-error';
}

/** Turns anything thrown into a bounded {@link Failure}. */
export function toFailure(reason: FailureReason, error: unknown, extra: Partial<Failure> = {}): Failure {
  let message: string;
  if (error instanceof Error) message = error.message;
  else if (
    typeof error === 'object' &&
    error !== null &&
    typeof (error as ActorFailureShape).message === 'string'
  )
    message = (error as ActorFailureShape).message as string;
  else message = String(error);
  return { reason, message: bounded(message), ...extra };
}
