import type { OracleRow, Reply } from '../oracle.js';
import { budgetError, prepared, providerError, summary, tooLong } from './replies.js';

/*
 * What one compaction pass must do, written from the rules (not from the machine):
 * run the route's strategy on the full history; NativeStandalone's window is canonical;
 * NativeInline falls back to Local when compaction does not fire, the edit is rejected, or
 * the request fails; Local summarizes, rejects bad summaries and rebuilds; a pass that fails
 * or does not shrink the history leaves it untouched. The summary machines run for real.
 */

const base = {
  turnId: 't1',
  mode: 'automatic',
  historyRef: 't1:history',
  itemsBefore: 20,
  budget: 2_000,
  startedAt: 0,
};
const standalone = { ...base, strategy: 'nativeStandalone' };
const inline = { ...base, strategy: 'nativeInline' };
const local = { ...base, strategy: 'local' };

const window = (historyRef: string, itemCount: number, shrank: boolean): Reply => ({
  done: { historyRef, itemCount, tokens: { before: 9_000, after: shrank ? 3_000 : 9_000 } },
});
const rebuilt = window('t1:compacted', 6, true);
/** A capacity-retry ladder answering as a whole (the standalone endpoint's: a window after `calls` calls, or none). */
const ladder = (status: 'done' | 'failed' | 'exhausted', calls = 1, extra = {}): Reply => ({
  done: {
    status,
    summaryRefs: status === 'done' ? ['t1:window'] : [],
    summaryTokens: status === 'done' ? 300 : 0,
    inputTokens: 9_000,
    truncated: false,
    followsTemplate: true,
    calls,
    repairs: 0,
    budget: null,
    failure:
      status === 'done' ? null : { reason: 'provider-error', message: 'HTTP 400 invalid_request_error' },
    ...extra,
  },
});
/** The inline request measured against the compact edit's trigger. */
const measured = (inputTokens: number): Reply => ({ done: { inputTokens, triggerTokens: 50_000 } });
const aboveTrigger = measured(60_000);
const NATIVE = ['nativeStandalone', 'adoptingNativeWindow'];
/** A flat Local summary that succeeds in one call. */
const oneSummary = { prepareSummaryInput: [prepared(1_600)], requestSummary: [summary()] };
const FLAT = ['prepareSummaryInput', 'requestSummary'];
const LOCAL_FLAT = ['local.choosingShape', 'local.summarizingFlat'];
const LOCAL_DONE = [
  'local.validatingSummary',
  'local.rebuildingHistory',
  'local.checkingReceipt',
  'checkingShrink',
  'compacted',
];
/** The receipt of a rebuilt history: `missing` of its 8 items are not in it. */
const receipt = (missing = 0): Reply => ({ done: { receiptRef: 't1:receipt', items: 8, missing } });
/** History and item count untouched. */
const untouched = { historyRef: 't1:history', itemsAfter: 20 };

/** The compaction oracle: strategies, fallbacks, summary checks and the rebuild. */
export const COMPACTION_ORACLE: readonly OracleRow[] = [
  {
    name: 'S1/O3: NativeStandalone: the returned window is used as is (20 → 4 items), no local summary',
    input: standalone,
    replies: { compactStandalone: [ladder('done')], adoptNativeWindow: [window('t1:native', 4, true)] },
    expect: {
      states: ['resolvingStrategy', ...NATIVE, 'checkingShrink', 'compacted'],
      calls: ['compactStandalone', 'adoptNativeWindow'],
      inputs: {
        compactStandalone: [{ historyRef: 't1:history', band: 'native' }],
        adoptNativeWindow: [{ historyRef: 't1:history', windowRef: 't1:window' }],
      },
      output: {
        status: 'compacted',
        strategy: 'nativeStandalone',
        historyRef: 't1:native',
        itemsBefore: 20,
        itemsAfter: 4,
        summaryCalls: 1,
        fallbackReason: null,
        failure: null,
      },
    },
  },
  {
    name: 'S1: a NativeStandalone error falls back to the Local summary, which compacts',
    input: standalone,
    replies: {
      compactStandalone: [ladder('failed')],
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', 'nativeStandalone', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: ['compactStandalone', ...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: {
        status: 'compacted',
        requestedStrategy: 'nativeStandalone',
        strategy: 'local',
        fallbackReason: 'standalone-error',
        historyRef: 't1:compacted',
        summaryCalls: 2,
        failure: null,
      },
    },
  },
  {
    name: 'L5: a NativeStandalone capacity rejection is retried once by the capacity-retry ladder with the rejected input halved',
    input: { ...standalone, retryBackoffMs: 100 },
    replies: {
      prepareSummaryInput: [prepared(9_000), prepared(4_400)],
      requestSummary: [tooLong(9_000), summary({ summaryRef: 't1:window', inputTokens: 4_400 })],
      adoptNativeWindow: [window('t1:native', 4, true)],
    },
    waitMs: 100,
    expect: {
      states: ['resolvingStrategy', ...NATIVE, 'checkingShrink', 'compacted'],
      calls: [...FLAT, ...FLAT, 'adoptNativeWindow'],
      inputs: {
        requestSummary: [
          { band: 'native', attempt: 0, budget: null },
          { band: 'native', attempt: 1, budget: 4_500 },
        ],
        adoptNativeWindow: [{ windowRef: 't1:window' }],
      },
      output: { status: 'compacted', strategy: 'nativeStandalone', summaryCalls: 2, historyRef: 't1:native' },
    },
  },
  {
    name: 'L5: NativeStandalone capacity rejections past the retries fall back to Local; every call counted',
    input: standalone,
    replies: {
      compactStandalone: [ladder('exhausted', 2)],
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', 'nativeStandalone', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: ['compactStandalone', ...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: { status: 'compacted', strategy: 'local', fallbackReason: 'standalone-error', summaryCalls: 3 },
    },
  },
  {
    name: 'S1: a native window that cannot be adopted falls back to the Local summary; the native call still counts',
    input: standalone,
    replies: {
      compactStandalone: [ladder('done')],
      adoptNativeWindow: [providerError('store write failed')],
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', ...NATIVE, ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: ['compactStandalone', 'adoptNativeWindow', ...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: { status: 'compacted', strategy: 'local', fallbackReason: 'standalone-error', summaryCalls: 2 },
    },
  },
  {
    name: 'A4: an inline request that cannot be built goes to Local without an inline call',
    input: inline,
    replies: {
      measureInline: [providerError('inline request cannot be built')],
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', 'measuringInline', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: ['measureInline', ...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: { status: 'compacted', strategy: 'local', fallbackReason: 'inline-error', summaryCalls: 1 },
    },
  },
  {
    name: 'S3: nothing before the kept recent context: unchanged, no provider call',
    input: { ...local, compactableItems: 0 },
    replies: {},
    expect: {
      states: ['resolvingStrategy', 'local.choosingShape', 'unchanged'],
      calls: [],
      output: { status: 'unchanged', ...untouched, summaryCalls: 0, nothingToCompact: true, failure: null },
    },
  },
  {
    name: 'S3: a model switch summarizes even when nothing precedes the kept context (the machine decides, not the runner)',
    input: { ...local, mode: 'modelSwitch', compactableItems: 0 },
    replies: { ...oneSummary, rebuildHistory: [rebuilt], checkReceipt: [receipt()] },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: { status: 'compacted', nothingToCompact: false, summaryCalls: 1 },
    },
  },
  {
    name: 'A4: a history under the inline trigger goes to Local without an inline call (the guard decides)',
    input: inline,
    replies: {
      measureInline: [measured(40_000)],
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', 'measuringInline', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: ['measureInline', ...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: { status: 'compacted', strategy: 'local', fallbackReason: 'below-trigger', summaryCalls: 1 },
    },
  },
  {
    name: 'H6: a native window that is no smaller (20 items, no token saving) is a no-op: unchanged',
    input: standalone,
    replies: { compactStandalone: [ladder('done')], adoptNativeWindow: [window('t1:native', 20, false)] },
    expect: {
      states: ['resolvingStrategy', ...NATIVE, 'checkingShrink', 'unchanged'],
      calls: ['compactStandalone', 'adoptNativeWindow'],
      output: { status: 'unchanged', ...untouched, failure: null },
    },
  },
  {
    name: 'A1–A3: NativeInline compacts: the inline window is used (20 → 3 items)',
    input: inline,
    replies: {
      measureInline: [aboveTrigger],
      compactInline: [
        {
          done: {
            kind: 'compacted',
            historyRef: 't1:inline',
            itemCount: 3,
            tokens: { before: 9_000, after: 3_000 },
          },
        },
      ],
    },
    expect: {
      states: ['resolvingStrategy', 'measuringInline', 'nativeInline', 'checkingShrink', 'compacted'],
      calls: ['measureInline', 'compactInline'],
      output: {
        status: 'compacted',
        strategy: 'nativeInline',
        historyRef: 't1:inline',
        itemsAfter: 3,
        summaryCalls: 1,
      },
    },
  },
  {
    name: 'A4: NativeInline where compaction does not fire falls back to Local, which compacts',
    input: inline,
    replies: {
      measureInline: [aboveTrigger],
      compactInline: [{ done: { kind: 'fallback', reason: 'no-compaction' } }],
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', 'measuringInline', 'nativeInline', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: ['measureInline', 'compactInline', ...FLAT, 'rebuildHistory', 'checkReceipt'],
      inputs: { rebuildHistory: [{ historyRef: 't1:history', summaryRefs: ['t1:summary'] }] },
      output: {
        status: 'compacted',
        requestedStrategy: 'nativeInline',
        strategy: 'local',
        fallbackReason: 'no-compaction',
        historyRef: 't1:compacted',
        itemsAfter: 6,
        summaryCalls: 2,
        summaryTokens: 120,
      },
    },
  },
  {
    name: 'A4: an inline request that fails (edit unsupported) falls back to Local, which compacts',
    input: inline,
    replies: {
      measureInline: [aboveTrigger],
      compactInline: [providerError('HTTP 400 compact_20260112 is not supported')],
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', 'measuringInline', 'nativeInline', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: ['measureInline', 'compactInline', ...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: {
        status: 'compacted',
        strategy: 'local',
        fallbackReason: 'inline-error',
        summaryCalls: 2,
        failure: null,
      },
    },
  },
  {
    name: 'S1: NativeStandalone asked for but the route has no standalone client: the machine runs Local (no-client), no native call',
    input: { ...standalone, nativeClients: { standalone: false, inline: true } },
    replies: { ...oneSummary, rebuildHistory: [rebuilt], checkReceipt: [receipt()] },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: {
        status: 'compacted',
        requestedStrategy: 'nativeStandalone',
        strategy: 'local',
        fallbackReason: 'no-client',
        summaryCalls: 1,
      },
    },
  },
  {
    name: 'S1: NativeInline asked for without an inline client runs Local (no-client)',
    input: { ...inline, nativeClients: { standalone: true, inline: false } },
    replies: { ...oneSummary, rebuildHistory: [rebuilt], checkReceipt: [receipt()] },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: { requestedStrategy: 'nativeInline', strategy: 'local', fallbackReason: 'no-client' },
    },
  },
  {
    name: 'L5/L7: Local flat: one summary, rebuilt as summary + retained messages (20 → 6)',
    input: local,
    replies: { ...oneSummary, rebuildHistory: [rebuilt], checkReceipt: [receipt()] },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt'],
      inputs: { requestSummary: [{ band: 'flat', budget: 2_000 }], rebuildHistory: [{ mode: 'automatic' }] },
      output: {
        status: 'compacted',
        strategy: 'local',
        historyRef: 't1:compacted',
        itemsAfter: 6,
        summaryCalls: 1,
        summaryTokens: 120,
        failure: null,
      },
    },
  },
  {
    name: 'L4: Local hierarchical: the rebuild gets both band summaries, older first',
    input: { ...local, hierarchical: true, mode: 'manual' },
    replies: {
      prepareBands: [{ done: { older: { inputTokens: 600 }, newer: { inputTokens: 700 } } }],
      prepareSummaryInput: [prepared(600), prepared(700)],
      requestSummary: [
        summary({ summaryRef: 't1:older', inputTokens: 600, summaryTokens: 40 }),
        summary({ summaryRef: 't1:newer', inputTokens: 700, summaryTokens: 90 }),
      ],
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', 'local.choosingShape', 'local.summarizingHierarchically', ...LOCAL_DONE],
      calls: ['prepareBands', ...FLAT, ...FLAT, 'rebuildHistory', 'checkReceipt'],
      inputs: { rebuildHistory: [{ summaryRefs: ['t1:older', 't1:newer'], mode: 'manual' }] },
      output: { status: 'compacted', mode: 'manual', summaryCalls: 2, summaryTokens: 130 },
    },
  },
  {
    name: 'L5/S4: Local: the capacity retries run out: the pass fails, history untouched, both calls counted',
    input: local,
    replies: {
      prepareSummaryInput: [prepared(1_600), prepared(800)],
      requestSummary: [tooLong(1_600), tooLong(800)],
    },
    waitMs: 0,
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, 'failed'],
      calls: [...FLAT, ...FLAT],
      output: { status: 'failed', ...untouched, summaryCalls: 2, failure: { reason: 'capacity-exhausted' } },
    },
  },
  {
    name: 'L4: hierarchical: a band over its budget fails the pass before any provider call',
    input: { ...local, hierarchical: true },
    replies: { prepareBands: [budgetError('newer band needs 900 tokens but only 500 are available')] },
    expect: {
      states: ['resolvingStrategy', 'local.choosingShape', 'local.summarizingHierarchically', 'failed'],
      calls: ['prepareBands'],
      output: { status: 'failed', ...untouched, summaryCalls: 0, failure: { reason: 'budget' } },
    },
  },
  {
    name: '§14: a summary cut off by the output limit is rejected; no rebuild, history untouched',
    input: local,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ finishReason: 'length' })],
    },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, 'local.validatingSummary', 'failed'],
      calls: FLAT,
      output: {
        status: 'failed',
        ...untouched,
        summaryCalls: 1,
        failure: { reason: 'summary-truncated', message: 'summary was cut off by the output limit' },
      },
    },
  },
  {
    name: '§14: a summary missing template sections gets one repair request, counted as a summary call; the repaired summary is used',
    input: local,
    replies: {
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ followsTemplate: false }), summary({ summaryRef: 't1:repaired' })],
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: [...FLAT, 'requestSummary', 'rebuildHistory', 'checkReceipt'],
      inputs: { requestSummary: [{ attempt: 0 }, { attempt: 0, repairOf: 't1:summary' }] },
      output: { status: 'compacted', summaryCalls: 2, repairRequests: 1 },
    },
  },
  {
    name: '§14: a summary the ladder reports as not following the template is rejected; history untouched',
    input: local,
    replies: {
      capacityRetry: [ladder('done', 1, { summaryTokens: 120, inputTokens: 1_600, followsTemplate: false })],
    },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, 'local.validatingSummary', 'failed'],
      calls: ['capacityRetry'],
      output: { status: 'failed', ...untouched, failure: { reason: 'summary-template-less' } },
    },
  },
  {
    name: '§14: a summary larger than its input (2,000 > 1,600 tokens) is rejected; history untouched',
    input: local,
    replies: { prepareSummaryInput: [prepared(1_600)], requestSummary: [summary({ summaryTokens: 2_000 })] },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, 'local.validatingSummary', 'failed'],
      calls: FLAT,
      output: { status: 'failed', ...untouched, failure: { reason: 'summary-larger-than-input' } },
    },
  },
  {
    name: 'L7/S4: a rebuild that fails fails the pass with its cause; history untouched',
    input: local,
    replies: { ...oneSummary, rebuildHistory: [{ error: new Error('rebuilt history exceeds the context') }] },
    expect: {
      states: [
        'resolvingStrategy',
        ...LOCAL_FLAT,
        'local.validatingSummary',
        'local.rebuildingHistory',
        'failed',
      ],
      calls: [...FLAT, 'rebuildHistory'],
      output: {
        status: 'failed',
        ...untouched,
        summaryCalls: 1,
        failure: { reason: 'rebuild-error', message: 'rebuilt history exceeds the context' },
      },
    },
  },
  {
    name: 'R3: items of the replaced span the rebuilt history lacks are added to the summary verbatim (amend step, no model call)',
    input: local,
    replies: {
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt(2)],
      amendSummary: [window('t1:amended', 6, true)],
    },
    expect: {
      states: [
        'resolvingStrategy',
        ...LOCAL_FLAT,
        ...LOCAL_DONE.slice(0, 3),
        'local.amendingSummary',
        'checkingShrink',
        'compacted',
      ],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt', 'amendSummary'],
      inputs: {
        checkReceipt: [{ historyRef: 't1:history', compactedRef: 't1:compacted' }],
        amendSummary: [{ compactedRef: 't1:compacted', receiptRef: 't1:receipt' }],
      },
      output: {
        status: 'compacted',
        historyRef: 't1:amended',
        summaryCalls: 1,
        receiptRef: 't1:receipt',
        receiptItems: 8,
        amendedItems: 2,
      },
    },
  },
  {
    name: 'R3: a receipt that cannot be checked fails the pass; history untouched',
    input: local,
    replies: { ...oneSummary, rebuildHistory: [rebuilt], checkReceipt: [providerError('receipt crashed')] },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, ...LOCAL_DONE.slice(0, 3), 'failed'],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: { status: 'failed', ...untouched, failure: { reason: 'rebuild-error' } },
    },
  },
  {
    name: 'R3: an amend step that fails fails the pass; history untouched',
    input: local,
    replies: {
      ...oneSummary,
      rebuildHistory: [rebuilt],
      checkReceipt: [receipt(1)],
      amendSummary: [providerError('amend crashed')],
    },
    expect: {
      states: [
        'resolvingStrategy',
        ...LOCAL_FLAT,
        ...LOCAL_DONE.slice(0, 3),
        'local.amendingSummary',
        'failed',
      ],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt', 'amendSummary'],
      output: { status: 'failed', ...untouched, failure: { reason: 'rebuild-error' } },
    },
  },
  {
    name: 'H6: a rebuilt history with more items and no token saving (86 → 88) is a no-op: unchanged',
    input: { ...local, itemsBefore: 86 },
    replies: {
      ...oneSummary,
      rebuildHistory: [window('t1:compacted', 88, false)],
      checkReceipt: [receipt()],
    },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, ...LOCAL_DONE.slice(0, 4), 'unchanged'],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: {
        status: 'unchanged',
        historyRef: 't1:history',
        itemsBefore: 86,
        itemsAfter: 86,
        failure: null,
      },
    },
  },
  {
    name: 'S3: one huge message summarized into one keeps the item count but saves tokens: compacted',
    input: { ...local, itemsBefore: 2 },
    replies: { ...oneSummary, rebuildHistory: [window('t1:compacted', 2, true)], checkReceipt: [receipt()] },
    expect: {
      states: ['resolvingStrategy', ...LOCAL_FLAT, ...LOCAL_DONE],
      calls: [...FLAT, 'rebuildHistory', 'checkReceipt'],
      output: { status: 'compacted', historyRef: 't1:compacted', itemsBefore: 2, itemsAfter: 2 },
    },
  },
];
