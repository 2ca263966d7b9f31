import { capacityRetryMachine, hierarchicalSummaryMachine } from '../../machines/index.js';
import type { PathModel } from './generate-paths.js';
import { capacityRetryOracle } from './oracles/capacity-retry.js';
import { hierarchicalSummaryOracle } from './oracles/hierarchical-summary.js';
import { bandOutcome, budgetError, prepared, providerError, summary, tooLong } from './samples.js';

const turn = { turnId: 't1', historyRef: 't1:history' };

/** The capacity-retry ladder: a fitting and a non-shrinking retry, every summary outcome. */
export const capacityRetryModel: PathModel = {
  machine: capacityRetryMachine,
  inputs: {
    'one retry': { ...turn, band: 'flat', budget: 2_000, retryBackoffMs: 250 },
    'no retries': { ...turn, band: 'flat', budget: 2_000, maxOverflowRetries: 0 },
    'unknown window': { ...turn, band: 'flat', budget: null },
  },
  replies: {
    prepareSummaryInput: [
      prepared(1_600),
      prepared(800),
      budgetError('summary input needs 50 tokens, 4 available'),
    ],
    requestSummary: [
      summary('summary'),
      summary('empty summary', { summaryTokens: 0, empty: true }),
      summary('cut-off summary', { finishReason: 'length' }),
      tooLong(1_600),
      providerError('HTTP 500 from provider'),
    ],
  },
  oracle: capacityRetryOracle,
};

/** The two-band summary: the child ladders answer as a whole (their own paths cover them). */
export const hierarchicalSummaryModel: PathModel = {
  machine: hierarchicalSummaryMachine,
  inputs: { 'known window': { ...turn, budget: 2_000 } },
  replies: {
    prepareBands: [
      { as: 'bands ready', done: { older: { inputTokens: 600 }, newer: { inputTokens: 700 } } },
      budgetError('newer band needs 900 tokens but only 500 are available'),
    ],
    capacityRetry: [
      bandOutcome('done', 't1:band', 2),
      bandOutcome('exhausted', 't1:band'),
      bandOutcome('failed', 't1:band'),
    ],
  },
  oracle: hierarchicalSummaryOracle,
};
