import { capacityRetryMachine } from '../../machines/index.js';
import type { PathModel } from './generate-paths.js';
import { capacityRetryOracle } from './oracles/capacity-retry.js';
import { budgetError, prepared, providerError, summary, tooLong } from './samples.js';

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
