import { oneLine } from '../core/text.js';
import { ContextCapacityError, EmptySummaryError, ProviderError } from '../core/errors.js';
import type { SummaryResponse } from '../providers/types.js';
import { MAX_FAILURE_MESSAGE_CHARS } from '../../machines/shared/failure.js';

/** Error contexts of the three summary calls. */
export const SUMMARY_FAILURE_LABEL = {
  flat: 'Failed to generate compaction summary',
  abstract: 'Failed to generate abstract summary',
  detail: 'Failed to generate detail summary',
} as const;

/** Which summary call failed. */
export type SummaryCallKind = keyof typeof SUMMARY_FAILURE_LABEL;

/** Route diagnostics every summary failure carries. */
export interface SummaryAttempt {
  provider: string;
  model: string;
  /** Estimated input tokens of the failing attempt. */
  inputTokens: number;
  /** Budget of the failing attempt (`null` = unknown window). */
  budget: number | null;
  kind?: SummaryCallKind;
}

// Provider messages can be long; the cause in a wrapped message stays one bounded line.

function boundedCause(cause: unknown): string {
  return oneLine(cause instanceof Error ? cause.message : String(cause), MAX_FAILURE_MESSAGE_CHARS);
}

/**
 * Wraps a provider failure as "{label} for {provider} / {model} (input_tokens=N,
 * budget=B): cause". A capacity rejection stays a {@link ContextCapacityError} so the capacity
 * retry ladder can still recognise it; the original error is kept as `cause`.
 */
export function summaryFailure(cause: unknown, attempt: SummaryAttempt): ProviderError {
  const label = SUMMARY_FAILURE_LABEL[attempt.kind ?? 'flat'];
  const budget = attempt.budget === null ? 'unknown' : String(attempt.budget);
  const message =
    `${label} for ${attempt.provider} / ${attempt.model} ` +
    `(input_tokens=${attempt.inputTokens}, budget=${budget}): ${boundedCause(cause)}`;
  const info = {
    ...(ProviderError.isInstance(cause) ? cause.info : {}),
    provider: attempt.provider,
    model: attempt.model,
    inputTokens: attempt.inputTokens,
    ...(attempt.budget === null ? {} : { budget: attempt.budget }),
  };
  return ContextCapacityError.isInstance(cause)
    ? new ContextCapacityError(message, info, { cause })
    : new ProviderError(message, info, { cause });
}

/**
 * The trimmed summary text, or {@link EmptySummaryError} ("provider returned an empty
 * summary", carrying provider/model, input_tokens and budget) when it is blank. Empty
 * summaries are never retried and never become an empty "Previous conversation summary".
 */
export function requireSummaryText(response: SummaryResponse, attempt: SummaryAttempt): string {
  const text = response.text.trim();
  if (text === '')
    throw new EmptySummaryError({
      provider: attempt.provider,
      model: attempt.model,
      inputTokens: attempt.inputTokens,
      ...(attempt.budget === null ? {} : { budget: attempt.budget }),
    });
  return text;
}
