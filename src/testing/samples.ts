import type { Reply } from './path-types.js';

/*
 * One sample answer per kind of outcome an invoked actor can give. The graph walk combines
 * them wherever the machine allows; more samples would only repeat the same paths.
 */

/** `prepareSummaryInput` finished: the fork holds `inputTokens`. */
export const prepared = (inputTokens: number): Reply => ({
  done: { inputTokens },
  as: `prepared ${inputTokens}`,
});

/** `requestSummary` finished with a summary (fields overridable). */
export const summary = (as: string, extra: Record<string, unknown> = {}): Reply => ({
  as,
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
  as: `too long ${inputTokens}`,
  error: { kind: 'capacity', inputTokens, message: 'context_length_exceeded' },
});

/** Any other provider failure. */
export const providerError = (message: string): Reply => ({
  as: 'provider error',
  error: { kind: 'provider', message },
});

/** A failure before any provider call: the input cannot fit the budget. */
export const budgetError = (message: string): Reply => ({
  as: 'budget error',
  error: { kind: 'budget', message },
});

/** A band's capacity-retry ladder ended with `status` after `calls` provider calls. */
export const bandOutcome = (status: 'done' | 'failed' | 'exhausted', ref: string, calls = 1): Reply => ({
  as: `${status} ${ref}`,
  done: {
    status,
    summaryRefs: status === 'done' ? [ref] : [],
    summaryTokens: status === 'done' ? 40 : 0,
    inputTokens: 600,
    truncated: false,
    followsTemplate: true,
    calls,
    repairs: 0,
    budget: 2_000,
    failure:
      status === 'done'
        ? null
        : {
            reason: status === 'exhausted' ? 'capacity-exhausted' : 'provider-error',
            message: `${ref} failed`,
          },
  },
});

/** A summary ladder's outcome with a summary (fields overridable). */
export const summaryOutcome = (as: string, extra: Record<string, unknown> = {}): Reply => ({
  as,
  done: {
    status: 'done',
    summaryRefs: ['t1:summary'],
    summaryTokens: 120,
    inputTokens: 1_600,
    truncated: false,
    followsTemplate: true,
    calls: 1,
    repairs: 0,
    budget: 2_000,
    failure: null,
    ...extra,
  },
});

/** A history window a strategy produced. */
export const historyWindow = (historyRef: string, itemCount: number, shrank: boolean): Reply => ({
  as: `${itemCount} items${shrank ? '' : ', no saving'}`,
  done: { historyRef, itemCount, tokens: savedTokens(shrank) },
});

/** Estimated tokens before and after a new history: fewer after when it saved any. */
export const savedTokens = (saved: boolean) => ({ before: 1_000, after: saved ? 400 : 1_000 });
