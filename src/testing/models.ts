import {
  capacityRetryMachine,
  compactionMachine,
  hierarchicalSummaryMachine,
  turnMachine,
} from '../../machines/index.js';
import type { PathModel } from './generate-paths.js';
import type { Reply } from './path-types.js';
import { capacityRetryOracle } from './oracles/capacity-retry.js';
import { compactionOracle } from './oracles/compaction.js';
import { turnOracle } from './oracles/turn.js';
import { hierarchicalSummaryOracle } from './oracles/hierarchical-summary.js';
import {
  bandOutcome,
  budgetError,
  historyWindow,
  summaryOutcome,
  prepared,
  providerError,
  savedTokens,
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
      summary('template-less summary', { followsTemplate: false }),
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
    standalone: { ...pass, strategy: 'nativeStandalone', nativeBudget: 8_000 },
    inline: { ...pass, strategy: 'nativeInline' },
    'standalone without its client': {
      ...pass,
      strategy: 'nativeStandalone',
      nativeClients: { standalone: false, inline: true },
    },
    local: { ...pass, strategy: 'local' },
    'local, two bands': { ...pass, strategy: 'local', hierarchical: true },
    'local, nothing to compact': { ...pass, strategy: 'local', compactableItems: 0 },
    'model switch, nothing to compact': {
      ...pass,
      mode: 'modelSwitch',
      strategy: 'local',
      compactableItems: 0,
    },
  },
  replies: {
    compactStandalone: [
      summaryOutcome('native window', { summaryRefs: ['t1:window'], calls: 2 }),
      bandOutcome('exhausted', 't1:window', 2),
      bandOutcome('failed', 't1:window'),
    ],
    adoptNativeWindow: [
      historyWindow('t1:native', 4, true),
      historyWindow('t1:native', 20, false),
      providerError('store write failed'),
    ],
    measureInline: [
      { as: 'above trigger', done: { inputTokens: 60_000, triggerTokens: 50_000 } },
      { as: 'below trigger', done: { inputTokens: 40_000, triggerTokens: 50_000 } },
      providerError('inline request cannot be built'),
    ],
    compactInline: [
      {
        as: 'compacted',
        done: { kind: 'compacted', historyRef: 't1:inline', itemCount: 3, tokens: savedTokens(true) },
      },
      { as: 'no compaction', done: { kind: 'fallback', reason: 'no-compaction' } },
      providerError('compact edit unsupported'),
    ],
    capacityRetry: [
      summaryOutcome('summary'),
      summaryOutcome('cut-off summary', { truncated: true }),
      summaryOutcome('template-less summary', { followsTemplate: false }),
      summaryOutcome('summary repaired', { calls: 2, repairs: 1 }),
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
    checkReceipt: [
      { as: 'receipt kept', done: { receiptRef: 't1:receipt', items: 8, missing: 0 } },
      { as: 'receipt missing 2', done: { receiptRef: 't1:receipt', items: 8, missing: 2 } },
      providerError('receipt crashed'),
    ],
    amendSummary: [historyWindow('t1:amended', 6, true), providerError('amend crashed')],
  },
  oracle: compactionOracle,
};

/**
 * A 6,000-token threshold and an 8,000-token prompt budget; a pass leaves 2,000 tokens (tail
 * and summary), so it buys 4,000 tokens of room.
 */
const policy = {
  thresholdTokens: 6_000,
  promptBudgetTokens: 8_000,
  summaryInputBudget: 5_000,
  prefixTokens: 0,
  continuityTailTokens: 1_500,
  summaryTokens: 500,
  waitsForCacheBreak: false,
  waitByCost: false,
  wait: { ratio: 0.5, maxTokens: 7_000 },
};
const turnInput = { ...turn, pendingRef: 't1:pending', strategy: 'local', startedAt: 0, policy };
const sent = (count: number) => ({ count, print: `p${count}`, clearedCallIds: [] });

/**
 * A request of `pressureTokens` whose newest step is `4,000 / turnsPerPass` tokens, so that a
 * summary pass would buy `turnsPerPass` steps like it; `prefixIntact` when it extends the last
 * request sent.
 */
const pressure = (
  as: string,
  pressureTokens: number,
  turnsPerPass = 20,
  extra: Record<string, unknown> = {},
): Reply => ({
  as,
  done: {
    pressureTokens,
    projectedTokens: pressureTokens - 1_000,
    prefixIntact: false,
    newestStepTokens: 4_000 / turnsPerPass,
    sent: sent(12),
    ...extra,
  },
});

/** What a compaction pass reports to the turn. */
const report = (status: string, summaryCalls: number): Reply => ({
  as: status,
  done: {
    status,
    mode: 'automatic',
    requestedStrategy: 'local',
    strategy: 'local',
    fallbackReason: null,
    itemsBefore: 12,
    itemsAfter: status === 'compacted' ? 5 : 12,
    historyRef: status === 'compacted' ? 't1:compacted' : 't1:synced',
    summaryCalls,
    repairRequests: 0,
    nothingToCompact: false,
    summaryTokens: status === 'compacted' ? 120 : 0,
    receiptRef: status === 'compacted' ? 't1:receipt' : null,
    receiptItems: status === 'compacted' ? 8 : 0,
    amendedItems: 0,
    startedAt: 0,
    failure:
      status === 'failed' ? { reason: 'empty-summary', message: 'provider returned an empty summary' } : null,
  },
});

const projection = (as: string, projectionRef: string, extra: Record<string, unknown> = {}): Reply => ({
  as,
  done: {
    projectionRef,
    itemCount: 12,
    tokensBefore: 9_000,
    tokensAfter: 7_000,
    clearedCount: 3,
    protectedBatchCount: 2,
    ...extra,
  },
});

/**
 * One headless turn: the compaction pass answers as a whole (its own paths cover it); each
 * loop-guard memory trips one rule, and a recovery pass is not stopped by it.
 */
export const turnModel: PathModel = {
  machine: turnMachine,
  inputs: {
    'fresh session': turnInput,
    'after two failed passes': { ...turnInput, loopGuard: { consecutiveFailures: 2 } },
    'after an ineffective pass': { ...turnInput, loopGuard: { lastFreedRatio: 0.01 } },
    'one turn after a pass': { ...turnInput, loopGuard: { turnsSinceCompaction: 1 } },
    'small window with large tool results': { ...turnInput, minTurnsPerPass: 10 },
    'recovery after two failed passes': {
      ...turnInput,
      mode: 'recovery',
      loopGuard: { consecutiveFailures: 2 },
    },
    'unknown window': { ...turnInput, policy: undefined },
    'waits while the cache holds': { ...turnInput, policy: { ...policy, waitsForCacheBreak: true } },
  },
  replies: {
    syncHistory: [{ as: 'synced', done: { historyRef: 't1:synced', itemCount: 12, syncedCount: 2 } }],
    normalizeProjection: [
      { as: 'normalized', done: { projectionRef: 't1:normalized', itemCount: 12, changed: true } },
    ],
    clearToolResults: [projection('cleared', 't1:cleared')],
    estimatePressure: [
      pressure('below threshold', 4_000),
      pressure('over threshold', 7_500),
      pressure('over the threshold, the cached prefix intact', 6_500, 20, { prefixIntact: true }),
      pressure('over the prompt budget', 9_000),
      pressure('a pass buys few steps', 7_500, 2),
      pressure('a pass buys no step', 9_000, 0.5),
      pressure('the window cannot hold the prompt, task and reserved output', 4_000, 20, {
        fixedPart: { prefix: 7_000, task: 1_500, reserved: 2_000, capacity: 10_000 },
      }),
    ],
    clearBeforeCompacting: [
      projection('cleared to fit', 't1:cleared-first', { pressureTokens: 5_000, sent: sent(10) }),
      projection('cleared, still over the budget', 't1:cleared-first', {
        pressureTokens: 8_500,
        sent: sent(11),
      }),
      providerError('clearing crashed'),
    ],
    compaction: [
      report('compacted', 1),
      report('unchanged', 1),
      report('failed', 1),
      providerError('compaction crashed'),
    ],
    rebuildProjection: [
      {
        as: 'rebuilt',
        done: {
          projectionRef: 't1:rebuilt',
          itemCount: 5,
          projectedTokens: 2_000,
          pressureTokens: 3_000,
          sent: sent(5),
        },
      },
      providerError('projection store write failed'),
    ],
    fitRequest: [
      {
        as: 'fitted',
        done: {
          projectionRef: 't1:fitted',
          itemCount: 12,
          tokensBefore: 9_000,
          projectedTokens: 5_000,
          pressureTokens: 6_000,
          clearedResults: 7,
          previewedResults: 1,
          droppedMessages: 0,
          sent: sent(9),
        },
      },
      providerError('fitting crashed'),
    ],
  },
  sends: { 'turn.cancelled': [{ type: 'turn.cancelled' }] },
  oracle: turnOracle,
};
