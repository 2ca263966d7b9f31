import type { OracleRow, Reply } from '../oracle.js';
import { budgetError, prepared, providerError, summary, tooLong } from './replies.js';

/*
 * What a two-band summary must do, written from the rules: prepare and validate both
 * bands before spending either provider call, then summarize the older band and the newer
 * band, each through the same capacity-retry contract as a flat summary. The capacity-retry
 * ladder runs for real here; only its actors are fakes.
 */

const input = { turnId: 't1', historyRef: 't1:history', budget: 2_000 };

const bandsReady: Reply = { done: { older: { inputTokens: 600 }, newer: { inputTokens: 700 } } };
const older = summary({ summaryRef: 't1:older', inputTokens: 600, summaryTokens: 40 });
const newer = summary({ summaryRef: 't1:newer', inputTokens: 700, summaryTokens: 90 });
const BAND = ['prepareSummaryInput', 'requestSummary'];

/** The hierarchical-summary oracle: both bands prepared first, then summarized in turn. */
export const HIERARCHICAL_SUMMARY_ORACLE: readonly OracleRow[] = [
  {
    name: 'L4: both bands are prepared first, then older and newer are summarized: two refs, older first',
    input,
    replies: {
      prepareBands: [bandsReady],
      prepareSummaryInput: [prepared(600), prepared(700)],
      requestSummary: [older, newer],
    },
    expect: {
      states: ['preparingBands', 'summarizingOlderBand', 'summarizingNewerBand', 'done'],
      calls: ['prepareBands', ...BAND, ...BAND],
      inputs: { requestSummary: [{ band: 'older' }, { band: 'newer' }] },
      output: {
        status: 'done',
        summaryRefs: ['t1:older', 't1:newer'],
        summaryTokens: 130,
        inputTokens: 1_300,
        calls: 2,
        failure: null,
      },
    },
  },
  {
    name: 'L4: a band that cannot fit its budget fails before either provider call',
    input,
    replies: { prepareBands: [budgetError('newer band needs 900 tokens but only 500 are available')] },
    expect: {
      states: ['preparingBands', 'failed'],
      calls: ['prepareBands'],
      output: {
        status: 'failed',
        summaryRefs: [],
        calls: 0,
        failure: { reason: 'budget', message: 'newer band needs 900 tokens but only 500 are available' },
      },
    },
  },
  {
    name: 'L4/L5: the older band runs out of capacity retries: exhausted, the newer band is never summarized',
    input,
    replies: {
      prepareBands: [bandsReady],
      prepareSummaryInput: [prepared(600), prepared(300)],
      requestSummary: [tooLong(600), tooLong(300)],
    },
    waitMs: 0,
    expect: {
      states: ['preparingBands', 'summarizingOlderBand', 'exhausted'],
      calls: ['prepareBands', ...BAND, ...BAND],
      inputs: { requestSummary: [{ band: 'older' }, { band: 'older' }] },
      output: { status: 'exhausted', summaryRefs: [], calls: 2, failure: { reason: 'capacity-exhausted' } },
    },
  },
  {
    name: 'L4/L5: the newer band is rejected for capacity once and its halved retry succeeds (one ladder for both)',
    input,
    replies: {
      prepareBands: [bandsReady],
      prepareSummaryInput: [prepared(600), prepared(700), prepared(350)],
      requestSummary: [older, tooLong(700), newer],
    },
    waitMs: 0,
    expect: {
      states: ['preparingBands', 'summarizingOlderBand', 'summarizingNewerBand', 'done'],
      calls: ['prepareBands', ...BAND, ...BAND, ...BAND],
      inputs: {
        requestSummary: [
          { band: 'older', budget: 2_000 },
          { band: 'newer', budget: 2_000 },
          { band: 'newer', budget: 1_000 },
        ],
      },
      output: { status: 'done', summaryRefs: ['t1:older', 't1:newer'], calls: 3, budget: 1_000 },
    },
  },
  {
    name: 'L4/L5: the newer band runs out of capacity retries: exhausted, no summary refs',
    input,
    replies: {
      prepareBands: [bandsReady],
      prepareSummaryInput: [prepared(600), prepared(700), prepared(350)],
      requestSummary: [older, tooLong(700), tooLong(350)],
    },
    waitMs: 0,
    expect: {
      states: ['preparingBands', 'summarizingOlderBand', 'summarizingNewerBand', 'exhausted'],
      calls: ['prepareBands', ...BAND, ...BAND, ...BAND],
      output: { status: 'exhausted', summaryRefs: [], calls: 3, failure: { reason: 'capacity-exhausted' } },
    },
  },
  {
    name: 'L6: an empty older-band summary fails the whole summary at once',
    input,
    replies: {
      prepareBands: [bandsReady],
      prepareSummaryInput: [prepared(600)],
      requestSummary: [summary({ summaryTokens: 0, empty: true })],
    },
    expect: {
      states: ['preparingBands', 'summarizingOlderBand', 'failed'],
      calls: ['prepareBands', ...BAND],
      output: {
        status: 'failed',
        summaryRefs: [],
        calls: 1,
        failure: { reason: 'empty-summary', message: 'provider returned an empty summary' },
      },
    },
  },
  {
    name: 'L6: a provider error on the newer band fails the whole summary with its cause',
    input,
    replies: {
      prepareBands: [bandsReady],
      prepareSummaryInput: [prepared(600), prepared(700)],
      requestSummary: [older, providerError('HTTP 503 from provider')],
    },
    expect: {
      states: ['preparingBands', 'summarizingOlderBand', 'summarizingNewerBand', 'failed'],
      calls: ['prepareBands', ...BAND, ...BAND],
      output: {
        status: 'failed',
        summaryRefs: [],
        calls: 2,
        failure: { reason: 'provider-error', message: 'HTTP 503 from provider' },
      },
    },
  },
];
