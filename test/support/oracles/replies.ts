import type { Reply } from '../oracle.js';

/** `prepareSummaryInput` finished: the fork holds `inputTokens`. */
export const prepared = (inputTokens: number): Reply => ({ done: { inputTokens } });

/** `requestSummary` finished with a good summary (fields overridable). */
export const summary = (extra: Record<string, unknown> = {}): Reply => ({
  done: {
    summaryRef: 't1:summary',
    summaryTokens: 120,
    inputTokens: 1_600,
    finishReason: 'stop',
    followsTemplate: true,
    empty: false,
    ...extra,
  },
});

/** The provider rejected a request of `inputTokens` for context capacity. */
export const tooLong = (inputTokens: number): Reply => ({
  error: { kind: 'capacity', inputTokens, message: 'context_length_exceeded' },
});

/** Any other provider failure. */
export const providerError = (message: string): Reply => ({ error: { kind: 'provider', message } });

/** A budget failure before any provider call (the input cannot fit at all). */
export const budgetError = (message: string): Reply => ({ error: { kind: 'budget', message } });
