import type { OracleRow } from '../oracle.js';
import { budgetError, prepared, providerError, summary, tooLong } from './replies.js';

/*
 * What the capacity-retry ladder must do, written from the rules (not from the machine): on a context-capacity rejection retry with the budget halved, at most
 * maxOverflowRetries times (default 1); skip a retry that cannot shrink the input; with an
 * unknown window derive the retry budget from the failing attempt; an empty summary or any
 * other provider failure ends at once.
 */

const input = { turnId: 't1', historyRef: 't1:history', band: 'flat', budget: 2_000 };

const ONE_CALL = ['prepareSummaryInput', 'requestSummary'];

/** The capacity-retry oracle: the fork, the halving retries and the failures that end at once. */
export const CAPACITY_RETRY_ORACLE: readonly OracleRow[] = [
  {
    name: 'L5: the first call succeeds: one provider call, summary ready',
    input,
    replies: { prepareSummaryInput: [prepared(1_600)], requestSummary: [summary()] },
    expect: {
      states: ['preparing', 'requesting', 'done'],
      calls: ONE_CALL,
      inputs: { requestSummary: [{ attempt: 0, budget: 2_000, band: 'flat' }] },
      output: { status: 'done', summaryRefs: ['t1:summary'], calls: 1, budget: 2_000, failure: null },
    },
  },
  {
    name: 'L5: a capacity rejection halves the budget (2,000 → 1,000), waits the pause, and the retry succeeds',
    input: { ...input, retryBackoffMs: 250 },
    replies: {
      prepareSummaryInput: [prepared(1_600), prepared(800)],
      requestSummary: [tooLong(1_600), summary({ inputTokens: 800 })],
    },
    waitMs: 250,
    expect: {
      states: ['preparing', 'requesting', 'backingOff', 'preparing', 'requesting', 'done'],
      calls: [...ONE_CALL, ...ONE_CALL],
      inputs: {
        prepareSummaryInput: [{ budget: 2_000 }, { budget: 1_000 }],
        requestSummary: [
          { attempt: 0, budget: 2_000 },
          { attempt: 1, budget: 1_000 },
        ],
      },
      output: { status: 'done', calls: 2, budget: 1_000, inputTokens: 800, failure: null },
    },
  },
  {
    name: 'L5: with the default of one retry, a second capacity rejection gives up (exhausted, no summary)',
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600), prepared(800)],
      requestSummary: [tooLong(1_600), tooLong(800)],
    },
    waitMs: 0,
    expect: {
      states: ['preparing', 'requesting', 'backingOff', 'preparing', 'requesting', 'exhausted'],
      calls: [...ONE_CALL, ...ONE_CALL],
      output: {
        status: 'exhausted',
        summaryRefs: [],
        calls: 2,
        budget: 1_000,
        failure: { reason: 'capacity-exhausted', inputTokens: 800, budget: 1_000 },
      },
    },
  },
  {
    name: 'L5: maxOverflowRetries 3 halves 2,000 → 1,000 → 500 → 250 and gives up after the fourth call',
    input: { ...input, maxOverflowRetries: 3 },
    replies: {
      prepareSummaryInput: [prepared(1_600), prepared(800), prepared(400), prepared(200)],
      requestSummary: [tooLong(1_600), tooLong(800), tooLong(400), tooLong(200)],
    },
    waitMs: 0,
    expect: {
      states: [
        ...['preparing', 'requesting', 'backingOff'],
        ...['preparing', 'requesting', 'backingOff'],
        ...['preparing', 'requesting', 'backingOff'],
        ...['preparing', 'requesting', 'exhausted'],
      ],
      calls: [...ONE_CALL, ...ONE_CALL, ...ONE_CALL, ...ONE_CALL],
      inputs: { requestSummary: [{ budget: 2_000 }, { budget: 1_000 }, { budget: 500 }, { budget: 250 }] },
      output: { status: 'exhausted', calls: 4, budget: 250, failure: { reason: 'capacity-exhausted' } },
    },
  },
  {
    name: 'L5: maxOverflowRetries 0: the first capacity rejection gives up',
    input: { ...input, maxOverflowRetries: 0 },
    replies: { prepareSummaryInput: [prepared(1_600)], requestSummary: [tooLong(1_600)] },
    expect: {
      states: ['preparing', 'requesting', 'exhausted'],
      calls: ONE_CALL,
      output: { status: 'exhausted', calls: 1, budget: 2_000, failure: { reason: 'capacity-exhausted' } },
    },
  },
  {
    name: "L5/S4: a retry whose halved fork is no smaller than the rejected one is skipped (one call only); the failure keeps the provider's error",
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600), prepared(1_600)],
      requestSummary: [tooLong(1_600)],
    },
    waitMs: 0,
    expect: {
      states: ['preparing', 'requesting', 'backingOff', 'preparing', 'exhausted'],
      calls: [...ONE_CALL, 'prepareSummaryInput'],
      output: {
        status: 'exhausted',
        summaryRefs: [],
        calls: 1,
        failure: {
          reason: 'cannot-shrink',
          message:
            'a retry cannot shrink the summary input (1600 >= 1600 tokens) after the capacity rejection: context_length_exceeded',
          inputTokens: 1_600,
          budget: 1_000,
        },
      },
    },
  },
  {
    name: 'L1/L5: unknown window: the first fork is verbatim, the retry budget is floor(9,001 / 2) = 4,500',
    input: { ...input, budget: null },
    replies: {
      prepareSummaryInput: [prepared(9_001), prepared(4_000)],
      requestSummary: [tooLong(9_001), summary({ inputTokens: 4_000 })],
    },
    waitMs: 0,
    expect: {
      states: ['preparing', 'requesting', 'backingOff', 'preparing', 'requesting', 'done'],
      calls: [...ONE_CALL, ...ONE_CALL],
      inputs: { prepareSummaryInput: [{ budget: null }, { budget: 4_500 }] },
      output: { status: 'done', calls: 2, budget: 4_500 },
    },
  },
  {
    name: 'L5: halving never goes below 4 tokens (6 → 4, VT Code floor)',
    input: { ...input, budget: 6 },
    replies: {
      prepareSummaryInput: [prepared(6), prepared(4)],
      requestSummary: [tooLong(6), summary({ inputTokens: 4 })],
    },
    waitMs: 0,
    expect: {
      states: ['preparing', 'requesting', 'backingOff', 'preparing', 'requesting', 'done'],
      calls: [...ONE_CALL, ...ONE_CALL],
      inputs: { prepareSummaryInput: [{ budget: 6 }, { budget: 4 }] },
      output: { status: 'done', budget: 4 },
    },
  },
  {
    name: 'L3: an input that cannot fit the budget fails before any provider call',
    input,
    replies: {
      prepareSummaryInput: [budgetError('summary budget exhausted: fork needs 50 tokens, 4 available')],
    },
    expect: {
      states: ['preparing', 'failed'],
      calls: ['prepareSummaryInput'],
      output: {
        status: 'failed',
        summaryRefs: [],
        calls: 0,
        failure: { reason: 'budget', message: 'summary budget exhausted: fork needs 50 tokens, 4 available' },
      },
    },
  },
  {
    name: 'L6: an empty summary fails with "provider returned an empty summary" and is not retried',
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ summaryTokens: 0, empty: true })],
    },
    expect: {
      states: ['preparing', 'requesting', 'failed'],
      calls: ONE_CALL,
      output: {
        status: 'failed',
        summaryRefs: [],
        calls: 1,
        failure: { reason: 'empty-summary', message: 'provider returned an empty summary' },
      },
    },
  },
  {
    name: 'L6: any other provider failure ends at once and carries input_tokens and budget',
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [providerError('HTTP 500 from provider')],
    },
    expect: {
      states: ['preparing', 'requesting', 'failed'],
      calls: ONE_CALL,
      output: {
        status: 'failed',
        calls: 1,
        failure: {
          reason: 'provider-error',
          message: 'HTTP 500 from provider',
          inputTokens: 1_600,
          budget: 2_000,
        },
      },
    },
  },
  {
    name: '§14: a summary cut off by the output limit is reported as truncated (compaction rejects it)',
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ finishReason: 'length' })],
    },
    expect: {
      states: ['preparing', 'requesting', 'done'],
      calls: ONE_CALL,
      output: { status: 'done', truncated: true, followsTemplate: true },
    },
  },
  {
    name: '§14: a summary missing template sections gets one repair request; the complete repair replaces it',
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ followsTemplate: false }), summary({ summaryRef: 't1:repaired' })],
    },
    expect: {
      states: ['preparing', 'requesting', 'repairing', 'done'],
      calls: [...ONE_CALL, 'requestSummary'],
      inputs: { requestSummary: [{ attempt: 0 }, { attempt: 0, repairOf: 't1:summary' }] },
      output: { status: 'done', summaryRefs: ['t1:repaired'], calls: 2, repairs: 1, followsTemplate: true },
    },
  },
  {
    name: '§14: a repair answer that is empty keeps the first summary, accepted with the call counted',
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [
        summary({ followsTemplate: false }),
        summary({ summaryRef: 't1:repaired', empty: true, summaryTokens: 0 }),
      ],
    },
    expect: {
      states: ['preparing', 'requesting', 'repairing', 'done'],
      calls: [...ONE_CALL, 'requestSummary'],
      output: { status: 'done', summaryRefs: ['t1:summary'], calls: 2, repairs: 1, followsTemplate: true },
    },
  },
  {
    name: '§14: a repair request that fails keeps the first summary; the ladder does not retry it',
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ followsTemplate: false }), tooLong(1_900)],
    },
    expect: {
      states: ['preparing', 'requesting', 'repairing', 'done'],
      calls: [...ONE_CALL, 'requestSummary'],
      output: { status: 'done', summaryRefs: ['t1:summary'], calls: 2, repairs: 1, failure: null },
    },
  },
  {
    name: '§14: a cut-off summary is not repaired (compaction rejects it)',
    input,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ followsTemplate: false, finishReason: 'length' })],
    },
    expect: {
      states: ['preparing', 'requesting', 'done'],
      calls: ONE_CALL,
      output: { status: 'done', truncated: true, calls: 1, repairs: 0, followsTemplate: false },
    },
  },
];
