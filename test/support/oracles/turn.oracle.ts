import type { OracleRow } from '../oracle.js';
import { prepared, summary } from './replies.js';
import { TURN_CANCEL_ROWS } from './turn-cancel.oracle.js';
import { TURN_POLICY_ROWS } from './turn-policy.oracle.js';
import {
  clearedFirst,
  COMPACTING,
  FIT,
  FRESH_GUARD,
  fittedRequest,
  input,
  kept,
  localPass,
  LOCAL_CALLS,
  pipeline,
  PIPELINE,
  PIPELINE_CALLS,
  POLICY,
  pressure,
  rebuiltProjection,
  sent,
} from './turn.replies.js';

/*
 * What one headless turn must do, written from the rules ("before estimating pressure, the
 * headless runner synchronizes"): sync → normalize → clear → estimate → decide;
 * below the threshold no summary call; otherwise the FULL history is compacted and the
 * projection rebuilt; failed or unchanged passes keep the existing projection; preflight only
 * reports; the loop guard stops automatic passes that keep failing, free too little or refill
 * at once. The compaction machine and the summary ladder run for real; only leaf actors are fakes.
 */

/** The turn oracle: one headless turn from sync to decision, the guards included. */
export const TURN_ORACLE: readonly OracleRow[] = [
  {
    name: '§14: a window that cannot hold the prompt, tools, task and reserved output ends the turn in windowTooSmall: no summary call, no fitting',
    input,
    replies: pipeline(
      pressure(4_000, 20, { fixedPart: { prefix: 7_000, task: 1_500, reserved: 2_000, capacity: 10_000 } }),
    ),
    expect: {
      states: [...PIPELINE, 'windowTooSmall'],
      calls: PIPELINE_CALLS,
      output: {
        decision: 'window-too-small',
        summaryCalls: 0,
        compaction: null,
        clearedToFit: false,
        fixedPart: { prefix: 7_000, task: 1_500, reserved: 2_000, capacity: 10_000 },
        loopGuard: FRESH_GUARD,
      },
    },
  },
  {
    name: '§14: a fixed part that fits the window exactly goes on to the usual decision',
    input,
    replies: pipeline(
      pressure(4_000, 20, { fixedPart: { prefix: 6_500, task: 1_500, reserved: 2_000, capacity: 10_000 } }),
    ),
    expect: {
      states: [...PIPELINE, 'belowThreshold'],
      calls: PIPELINE_CALLS,
      output: { decision: 'below-threshold', summaryCalls: 0 },
    },
  },
  {
    name: 'H2: pressure below the threshold after clearing: no summary call, the cleared projection is the request',
    input,
    replies: pipeline(pressure(4_000)),
    expect: {
      states: [...PIPELINE, 'belowThreshold'],
      calls: PIPELINE_CALLS,
      output: {
        decision: 'below-threshold',
        summaryCalls: 0,
        compaction: null,
        ...kept,
        tokens: { beforeClearing: 9_000, afterClearing: 7_000, afterCompaction: null },
        pressureTokens: 4_000,
        thresholdTokens: 6_000,
        advisory: { estimatedTokens: 4_000, budgetTokens: 8_000, percentUsed: 50, overBudget: false },
        loopGuard: FRESH_GUARD,
      },
    },
  },
  {
    name: 'H1/H3: over the threshold the FULL synced history is compacted, not the projection; the projection is rebuilt',
    input,
    replies: { ...pipeline(pressure(8_000)), ...localPass, rebuildProjection: [rebuiltProjection] },
    expect: {
      states: [...COMPACTING, 'working.rebuildingProjection', 'working.settling', 'compacted'],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS, 'rebuildProjection'],
      inputs: {
        syncHistory: [{ historyRef: 't1:history', pendingRef: 't1:pending' }],
        normalizeProjection: [{ historyRef: 't1:synced' }],
        clearToolResults: [{ projectionRef: 't1:normalized' }],
        estimatePressure: [{ projectionRef: 't1:cleared' }],
        prepareSummaryInput: [{ historyRef: 't1:synced', budget: 5_000 }],
        rebuildHistory: [{ historyRef: 't1:synced' }],
        rebuildProjection: [{ historyRef: 't1:compacted' }],
      },
      output: {
        decision: 'compacted',
        strategy: 'local',
        summaryCalls: 1,
        historyRef: 't1:compacted',
        requestRef: 't1:rebuilt',
        items: { before: 12, after: 5 },
        tokens: { beforeClearing: 9_000, afterClearing: 7_000, afterCompaction: 2_000 },
        pressureTokens: 3_000,
        advisory: { estimatedTokens: 3_000, budgetTokens: 8_000, percentUsed: 38, overBudget: false },
        // 8,000 → 3,000 tokens of pressure: the pass freed 62.5 %.
        loopGuard: { consecutiveFailures: 0, lastFreedRatio: 0.625, turnsSinceCompaction: 0 },
      },
    },
  },
  {
    name: 'H3/H6: a pass that gains nothing keeps the synced history and the cleared projection',
    input,
    replies: {
      ...pipeline(pressure(8_000)),
      ...localPass,
      rebuildHistory: [
        { done: { historyRef: 't1:compacted', itemCount: 14, tokens: { before: 9_000, after: 9_000 } } },
      ],
    },
    expect: {
      states: [...COMPACTING, 'working.settling', 'unchanged'],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS],
      output: {
        decision: 'unchanged',
        ...kept,
        compaction: { status: 'unchanged' },
        loopGuard: { consecutiveFailures: 0, lastFreedRatio: 0 },
      },
    },
  },
  {
    name: 'H3/S4: a failed pass (empty summary) keeps history and projection and counts a failure for the loop guard',
    input,
    replies: {
      ...pipeline(pressure(8_000)),
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ empty: true, summaryTokens: 0 })],
    },
    expect: {
      states: [...COMPACTING, 'working.settling', 'failed'],
      calls: [...PIPELINE_CALLS, 'prepareSummaryInput', 'requestSummary'],
      output: {
        decision: 'failed',
        ...kept,
        summaryCalls: 1,
        compaction: { status: 'failed', failure: { reason: 'empty-summary' } },
        advisory: { estimatedTokens: 8_000, budgetTokens: 8_000, percentUsed: 100, overBudget: false },
        loopGuard: { consecutiveFailures: 1, lastFreedRatio: null, turnsSinceCompaction: null },
      },
    },
  },
  {
    name: 'H4/§14: a request over the prompt budget after a failed pass is made to fit before it is sent; the turn still ends with a request',
    input,
    replies: {
      ...pipeline(pressure(9_000)),
      prepareSummaryInput: [prepared(1_600)],
      requestSummary: [summary({ finishReason: 'length' })],
      fitRequest: [fittedRequest],
    },
    expect: {
      states: [...COMPACTING, 'working.settling', 'working.fitting', 'working.settling', 'failed'],
      calls: [...PIPELINE_CALLS, 'prepareSummaryInput', 'requestSummary', 'fitRequest'],
      inputs: { fitRequest: [{ turnId: 't1', historyRef: 't1:synced' }] },
      output: {
        decision: 'failed',
        historyRef: 't1:synced',
        requestRef: 't1:fitted',
        clearedToFit: true,
        fit: FIT,
        pressureTokens: 6_000,
        advisory: { estimatedTokens: 6_000, budgetTokens: 8_000, percentUsed: 75, overBudget: false },
      },
    },
  },
  {
    name: 'H3: a projection rebuild that fails keeps the old history and projection; the pass is reported as failed',
    input,
    replies: {
      ...pipeline(pressure(8_000)),
      ...localPass,
      rebuildProjection: [{ error: new Error('projection failed') }],
    },
    expect: {
      states: [...COMPACTING, 'working.rebuildingProjection', 'working.settling', 'failed'],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS, 'rebuildProjection'],
      output: {
        decision: 'failed',
        ...kept,
        tokens: { afterCompaction: null },
        compaction: {
          status: 'failed',
          historyRef: 't1:synced',
          itemsAfter: 12,
          failure: { reason: 'rebuild-error', message: 'projection failed' },
        },
        loopGuard: { consecutiveFailures: 1 },
      },
    },
  },
  {
    name: 'H3: a compaction actor that crashes fails the turn; history and projection are kept',
    input,
    replies: {
      ...pipeline(pressure(8_000)),
      compaction: [{ error: new Error('unexpected compaction crash') }],
    },
    expect: {
      states: [...COMPACTING, 'working.settling', 'failed'],
      calls: [...PIPELINE_CALLS, 'compaction'],
      output: {
        decision: 'failed',
        ...kept,
        compaction: null,
        summaryCalls: 0,
        loopGuard: { consecutiveFailures: 1 },
      },
    },
  },
  {
    name: '§14: after two failed automatic passes in a row the loop guard skips compaction (no summary call)',
    input: {
      ...input,
      loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
    },
    replies: pipeline(pressure(8_000)),
    expect: {
      states: [...PIPELINE, 'working.choosing', 'working.settling', 'guarded'],
      calls: PIPELINE_CALLS,
      output: {
        decision: 'guarded',
        guardReason: 'repeated-failures',
        compaction: null,
        ...kept,
        loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
      },
    },
  },
  {
    name: '§14: after a pass that freed under 5 % the loop guard skips compaction',
    input: { ...input, loopGuard: { consecutiveFailures: 0, lastFreedRatio: 0.01, turnsSinceCompaction: 5 } },
    replies: pipeline(pressure(8_000)),
    expect: {
      states: [...PIPELINE, 'working.choosing', 'working.settling', 'guarded'],
      calls: PIPELINE_CALLS,
      output: {
        decision: 'guarded',
        guardReason: 'ineffective-pass',
        loopGuard: { consecutiveFailures: 0, lastFreedRatio: 0.01, turnsSinceCompaction: 6 },
      },
    },
  },
  {
    name: '§14: pressure back over the threshold one turn after an effective pass is not thrash: compaction runs again',
    input: { ...input, loopGuard: { consecutiveFailures: 0, lastFreedRatio: 0.4, turnsSinceCompaction: 1 } },
    replies: { ...pipeline(pressure(8_000)), ...localPass, rebuildProjection: [rebuiltProjection] },
    expect: {
      states: [...COMPACTING, 'working.rebuildingProjection', 'working.settling', 'compacted'],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS, 'rebuildProjection'],
      output: {
        decision: 'compacted',
        guardReason: null,
        summaryCalls: 1,
        loopGuard: { consecutiveFailures: 0, lastFreedRatio: 0.625, turnsSinceCompaction: 0 },
      },
    },
  },
  {
    name: '§14/C1: a guarded request over the prompt budget is made to fit (clearing, then previews); no summary call, no error',
    input: {
      ...input,
      loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
    },
    replies: { ...pipeline(pressure(9_000)), fitRequest: [fittedRequest] },
    expect: {
      states: [
        ...PIPELINE,
        'working.choosing',
        'working.settling',
        'working.fitting',
        'working.settling',
        'guarded',
      ],
      calls: [...PIPELINE_CALLS, 'fitRequest'],
      inputs: { fitRequest: [{ turnId: 't1', historyRef: 't1:synced' }] },
      output: {
        decision: 'guarded',
        guardReason: 'repeated-failures',
        clearedToFit: true,
        fit: FIT,
        summaryCalls: 0,
        compaction: null,
        historyRef: 't1:synced',
        requestRef: 't1:fitted',
        tokens: { beforeClearing: 9_000, afterClearing: 7_000, afterCompaction: null },
        pressureTokens: 6_000,
        advisory: { estimatedTokens: 6_000, budgetTokens: 8_000, percentUsed: 75, overBudget: false },
        loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
      },
    },
  },
  {
    name: '§14: fitting that crashes keeps the projection; the advisory still says it does not fit',
    input: {
      ...input,
      loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
    },
    replies: { ...pipeline(pressure(9_000)), fitRequest: [{ error: new Error('fitting crashed') }] },
    expect: {
      states: [
        ...PIPELINE,
        'working.choosing',
        'working.settling',
        'working.fitting',
        'working.settling',
        'guarded',
      ],
      calls: [...PIPELINE_CALLS, 'fitRequest'],
      output: {
        decision: 'guarded',
        guardReason: 'repeated-failures',
        clearedToFit: false,
        fit: null,
        ...kept,
        pressureTokens: 9_000,
        advisory: { estimatedTokens: 9_000, budgetTokens: 8_000, overBudget: true },
      },
    },
  },
  {
    name: 'H3/§14: a compacted history whose projection is still over the prompt budget is made to fit from the compacted history',
    input,
    replies: {
      ...pipeline(pressure(8_000)),
      ...localPass,
      rebuildProjection: [
        {
          done: { projectionRef: 't1:rebuilt', itemCount: 5, projectedTokens: 8_500, pressureTokens: 9_500 },
        },
      ],
      fitRequest: [fittedRequest],
    },
    expect: {
      states: [
        ...COMPACTING,
        'working.rebuildingProjection',
        'working.settling',
        'working.fitting',
        'working.settling',
        'compacted',
      ],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS, 'rebuildProjection', 'fitRequest'],
      inputs: { fitRequest: [{ historyRef: 't1:compacted' }] },
      output: {
        decision: 'compacted',
        historyRef: 't1:compacted',
        requestRef: 't1:fitted',
        clearedToFit: true,
        pressureTokens: 6_000,
        advisory: { overBudget: false },
      },
    },
  },
  {
    name: 'H2/§14: when a summary pass would buy fewer turns than asked, old tool results are cleared first; under the threshold no summary call',
    input: { ...input, minTurnsPerPass: 10 },
    replies: { ...pipeline(pressure(8_000, 2)), clearBeforeCompacting: [clearedFirst(5_000)] },
    expect: {
      states: [...PIPELINE, 'working.clearingFirst', 'cleared'],
      calls: [...PIPELINE_CALLS, 'clearBeforeCompacting'],
      inputs: { clearBeforeCompacting: [{ turnId: 't1', historyRef: 't1:synced', targetTokens: 5_999 }] },
      output: {
        decision: 'cleared',
        summaryCalls: 0,
        compaction: null,
        historyRef: 't1:synced',
        requestRef: 't1:cleared-first',
        pressureTokens: 5_000,
        clearing: { clearedResults: 5 },
        advisory: { estimatedTokens: 5_000, budgetTokens: 8_000, overBudget: false },
        loopGuard: FRESH_GUARD,
      },
    },
  },
  {
    name: 'H2/H3: clearing first that cannot fit the prompt budget leaves the decision to compaction of the full history',
    input: { ...input, minTurnsPerPass: 10 },
    replies: {
      ...pipeline(pressure(9_000, 2)),
      clearBeforeCompacting: [clearedFirst(8_500)],
      ...localPass,
      rebuildProjection: [rebuiltProjection],
    },
    expect: {
      states: [
        ...PIPELINE,
        'working.clearingFirst',
        'working.choosing',
        'working.compacting',
        'working.rebuildingProjection',
        'working.settling',
        'compacted',
      ],
      calls: [...PIPELINE_CALLS, 'clearBeforeCompacting', ...LOCAL_CALLS, 'rebuildProjection'],
      inputs: { prepareSummaryInput: [{ historyRef: 't1:synced' }] },
      output: { decision: 'compacted', requestRef: 't1:rebuilt', summaryCalls: 1 },
    },
  },
  {
    name: '§14: when the newest step alone fills what a pass would leave, no summary call: the cleared request is made to fit',
    input: { ...input, minTurnsPerPass: 10 },
    replies: {
      ...pipeline(pressure(9_500, 0.5)),
      clearBeforeCompacting: [clearedFirst(8_500)],
      fitRequest: [fittedRequest],
    },
    expect: {
      states: [
        ...PIPELINE,
        'working.clearingFirst',
        'working.settling',
        'working.fitting',
        'working.settling',
        'cleared',
      ],
      calls: [...PIPELINE_CALLS, 'clearBeforeCompacting', 'fitRequest'],
      // Fitted to the policy's prompt budget, keeping cleared what the request measured last had
      // cleared (the cleared one is over the threshold): here nothing.
      inputs: {
        clearBeforeCompacting: [{ targetTokens: 5_999, keepCleared: [] }],
        fitRequest: [{ historyRef: 't1:synced', budgetTokens: 8_000, keepCleared: [] }],
      },
      output: {
        decision: 'cleared',
        summaryCalls: 0,
        compaction: null,
        requestRef: 't1:fitted',
        lastSent: sent(9),
        cacheCycle: { last: 9_500, maxStep: 0, afterPass: 2_000 },
        clearedToFit: true,
        fit: FIT,
        pressureTokens: 6_000,
      },
    },
  },
  {
    name: '§14: clearing first that crashes leaves the decision to the loop guard and compaction',
    input: {
      ...input,
      minTurnsPerPass: 10,
      loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
    },
    replies: { ...pipeline(pressure(8_000, 2)), clearBeforeCompacting: [{ error: new Error('boom') }] },
    expect: {
      states: [...PIPELINE, 'working.clearingFirst', 'working.choosing', 'working.settling', 'guarded'],
      calls: [...PIPELINE_CALLS, 'clearBeforeCompacting'],
      output: { decision: 'guarded', guardReason: 'repeated-failures', ...kept },
    },
  },
  {
    name: 'H2: a pass that buys enough turns is not replaced by clearing: compaction runs',
    input: { ...input, minTurnsPerPass: 10 },
    replies: { ...pipeline(pressure(8_000, 12)), ...localPass, rebuildProjection: [rebuiltProjection] },
    expect: {
      states: [...COMPACTING, 'working.rebuildingProjection', 'working.settling', 'compacted'],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS, 'rebuildProjection'],
      output: { decision: 'compacted' },
    },
  },
  {
    name: '§14: a recovery pass is not automatic, so the loop guard does not stop it',
    input: {
      ...input,
      mode: 'recovery',
      loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
    },
    replies: { ...pipeline(pressure(8_000)), ...localPass, rebuildProjection: [rebuiltProjection] },
    expect: {
      states: [...COMPACTING, 'working.rebuildingProjection', 'working.settling', 'compacted'],
      calls: [...PIPELINE_CALLS, ...LOCAL_CALLS, 'rebuildProjection'],
      inputs: { rebuildHistory: [{ mode: 'recovery' }] },
      output: { decision: 'compacted', guardReason: null, loopGuard: { consecutiveFailures: 0 } },
    },
  },
  {
    name: 'H5: unknown capacity and no explicit threshold never compacts; the advisory has no budget',
    input: {
      ...input,
      policy: { ...POLICY, thresholdTokens: null, promptBudgetTokens: null, summaryInputBudget: null },
    },
    replies: { ...pipeline(pressure(50_000)) },
    expect: {
      states: [...PIPELINE, 'belowThreshold'],
      calls: PIPELINE_CALLS,
      output: {
        decision: 'below-threshold',
        thresholdTokens: null,
        advisory: { estimatedTokens: 50_000, budgetTokens: null, percentUsed: null, overBudget: false },
      },
    },
  },
  ...TURN_POLICY_ROWS,
  ...TURN_CANCEL_ROWS,
];
