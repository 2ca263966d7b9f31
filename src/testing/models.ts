import { capacityRetryMachine, compactionMachine, hierarchicalSummaryMachine } from '../../machines/index.js';
import type { PathModel } from './generate-paths.js';
import { capacityRetryOracle } from './oracles/capacity-retry.js';
import { compactionOracle } from './oracles/compaction.js';
import { hierarchicalSummaryOracle } from './oracles/hierarchical-summary.js';
import {
  bandOutcome,
  budgetError,
  historyWindow,
  summaryOutcome,
  prepared,
  providerError,
  summary,
  tooLong,
} from './samples.js';

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

const pass = { ...turn, mode: 'automatic', itemsBefore: 20, budget: 2_000, startedAt: 0 };

/** One compaction pass: every strategy, its fallbacks, every summary verdict and rebuild. */
export const compactionModel: PathModel = {
  machine: compactionMachine,
  inputs: {
    standalone: { ...pass, strategy: 'nativeStandalone', nativeBudget: 8_000, retryBackoffMs: 100 },
    inline: { ...pass, strategy: 'nativeInline' },
    local: { ...pass, strategy: 'local' },
    'local, two bands': { ...pass, strategy: 'local', hierarchical: true },
    'local, nothing to compact': { ...pass, strategy: 'local', compactableItems: 0 },
  },
  replies: {
    compactStandalone: [
      historyWindow('t1:native', 4, true),
      historyWindow('t1:native', 20, false),
      tooLong(9_000),
      providerError('HTTP 400 invalid_request_error'),
    ],
    compactInline: [
      { as: 'compacted', done: { kind: 'compacted', historyRef: 't1:inline', itemCount: 3, shrank: true } },
      { as: 'below trigger', done: { kind: 'fallback', reason: 'below-trigger' } },
      { as: 'no compaction', done: { kind: 'fallback', reason: 'no-compaction' } },
      providerError('compact edit unsupported'),
    ],
    capacityRetry: [
      summaryOutcome('summary'),
      summaryOutcome('cut-off summary', { truncated: true }),
      summaryOutcome('template-less summary', { followsTemplate: false }),
      summaryOutcome('summary larger than input', { summaryTokens: 2_000 }),
      bandOutcome('exhausted', 't1:summary', 2),
    ],
    hierarchicalSummary: [
      summaryOutcome('two bands', { summaryRefs: ['t1:older', 't1:newer'], calls: 2 }),
      bandOutcome('failed', 't1:bands', 0),
    ],
    rebuildHistory: [
      historyWindow('t1:compacted', 6, true),
      historyWindow('t1:compacted', 22, false),
      providerError('store write failed'),
    ],
  },
  oracle: compactionOracle,
};
