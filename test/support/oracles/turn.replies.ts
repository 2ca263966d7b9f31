import type { Reply } from '../oracle.js';
import { prepared, summary } from './replies.js';

/*
 * Inputs and fake-actor replies of the turn oracle: a session synced to 12 items, cleared from
 * 9,000 to 7,000 tokens, against a 6,000-token threshold and an 8,000-token prompt budget.
 */

/** A 6,000-token threshold, an 8,000-token prompt budget; a pass leaves 2,000 tokens (tail and summary). */
export const POLICY = {
  thresholdTokens: 6_000,
  promptBudgetTokens: 8_000,
  summaryInputBudget: 5_000,
  prefixTokens: 0,
  continuityTailTokens: 1_500,
  summaryTokens: 500,
  waitsForCacheBreak: false,
  waitByCost: false,
  wait: { ratio: 0.85, maxTokens: 7_000 },
};

export const input = {
  turnId: 't1',
  historyRef: 't1:history',
  pendingRef: 't1:pending',
  strategy: 'local',
  startedAt: 0,
  policy: POLICY,
};

/** The print of a request of `count` messages, as the actors report it. */
export const sent = (count: number) => ({ count, print: `p${count}`, clearedCallIds: [] });

export const synced: Reply = { done: { historyRef: 't1:synced', itemCount: 12, syncedCount: 2 } };
export const normalized: Reply = { done: { projectionRef: 't1:normalized', itemCount: 12, changed: true } };
export const cleared: Reply = {
  done: {
    projectionRef: 't1:cleared',
    itemCount: 12,
    tokensBefore: 9_000,
    tokensAfter: 7_000,
    clearedCount: 3,
    protectedBatchCount: 2,
  },
};
/**
 * A request of `pressureTokens` against {@link POLICY}: its newest step is 4,000 / `turnsPerPass`
 * tokens, so a summary pass would buy `turnsPerPass` turns of growth like it (default 20).
 */
export const pressure = (
  pressureTokens: number,
  turnsPerPass = 20,
  extra: Record<string, unknown> = {},
): Reply => ({
  done: {
    pressureTokens,
    projectedTokens: pressureTokens - 1_000,
    prefixIntact: false,
    newestStepTokens: 4_000 / turnsPerPass,
    sent: sent(12),
    ...extra,
  },
});
export const rebuiltProjection: Reply = {
  done: {
    projectionRef: 't1:rebuilt',
    itemCount: 5,
    projectedTokens: 2_000,
    pressureTokens: 3_000,
    sent: sent(5),
  },
};
/** A request over the prompt budget made to fit: 9,000 tokens of history down to 5,000 (6,000 of pressure). */
export const fittedRequest: Reply = {
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
};
/** What `fitRequest` reports for {@link fittedRequest}. */
export const FIT = {
  tokensBefore: 9_000,
  tokensAfter: 5_000,
  clearedResults: 7,
  previewedResults: 1,
  droppedMessages: 0,
};
/** Old tool results cleared instead of a summary pass, down to `pressureTokens`. */
export const clearedFirst = (pressureTokens: number): Reply => ({
  done: {
    projectionRef: 't1:cleared-first',
    itemCount: 12,
    tokensBefore: 9_000,
    tokensAfter: pressureTokens - 1_000,
    clearedCount: 5,
    protectedBatchCount: 0,
    pressureTokens,
    sent: sent(10),
  },
});
export const compactedHistory: Reply = {
  done: { historyRef: 't1:compacted', itemCount: 5, tokens: { before: 9_000, after: 3_000 } },
};

export const pipeline = (p: Reply) => ({
  syncHistory: [synced],
  normalizeProjection: [normalized],
  clearToolResults: [cleared],
  estimatePressure: [p],
});
/** A Local pass whose summary and rebuild succeed. */
export const localPass = {
  prepareSummaryInput: [prepared(1_600)],
  requestSummary: [summary()],
  rebuildHistory: [compactedHistory],
  checkReceipt: [{ done: { receiptRef: 't1:receipt', items: 8, missing: 0 } }],
};
export const PIPELINE = [
  'working.syncing',
  'working.normalizing',
  'working.clearing',
  'working.estimating',
  'working.deciding',
];
/** Past the threshold, on to the loop guard and compaction. */
export const COMPACTING = [...PIPELINE, 'working.choosing', 'working.compacting'];
export const PIPELINE_CALLS = ['syncHistory', 'normalizeProjection', 'clearToolResults', 'estimatePressure'];
export const LOCAL_CALLS = ['prepareSummaryInput', 'requestSummary', 'rebuildHistory', 'checkReceipt'];
/** History and projection as they were before the pass (kept when a pass fails). */
export const kept = {
  historyRef: 't1:synced',
  requestRef: 't1:cleared',
  items: { before: 12, after: 12 },
};
export const FRESH_GUARD = { consecutiveFailures: 0, lastFreedRatio: null, turnsSinceCompaction: null };
