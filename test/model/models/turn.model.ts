import { turnMachine, type CompactionOutput, type TurnContext } from '../../../machines/index.js';
import type { MachineModel } from '../../support/graph-helpers.js';

/** A successful compaction report (the child machine is stubbed in the turn model). */
export const COMPACTED: CompactionOutput = {
  status: 'compacted',
  mode: 'automatic',
  requestedStrategy: 'local',
  strategy: 'local',
  fallbackReason: null,
  itemsBefore: 12,
  itemsAfter: 5,
  historyRef: 't1:history:compacted',
  summaryCalls: 1,
  summaryTokens: 150,
  startedAt: 0,
  failure: null,
};

const base = {
  turnId: 't1',
  historyRef: 't1:history:input',
  pendingRef: 't1:pending',
  strategy: 'local',
  startedAt: 0,
};

/** Model of one headless turn (H1–H6, §14). */
export const turnModel: MachineModel = {
  machine: turnMachine,
  actorNames: [
    'syncHistory',
    'normalizeProjection',
    'clearToolResults',
    'estimatePressure',
    'compaction',
    'rebuildProjection',
  ],
  samples: {
    'xstate.done.actor.syncHistory': [
      { output: { historyRef: 't1:history:synced', itemCount: 12, syncedCount: 2 } },
    ],
    'xstate.done.actor.normalizeProjection': [
      { output: { projectionRef: 't1:projection:normalized', itemCount: 12, changed: true } },
    ],
    'xstate.done.actor.clearToolResults': [
      {
        output: {
          projectionRef: 't1:projection:cleared',
          itemCount: 12,
          tokensBefore: 9_000,
          tokensAfter: 7_000,
          clearedCount: 3,
          protectedBatchCount: 2,
        },
      },
    ],
    'xstate.done.actor.estimatePressure': [
      {
        output: {
          pressureTokens: 8_000,
          projectedTokens: 7_000,
          thresholdTokens: 6_000,
          promptBudgetTokens: 8_000,
          summaryInputBudget: 5_000,
        },
      },
      {
        output: {
          pressureTokens: 4_000,
          projectedTokens: 3_000,
          thresholdTokens: 6_000,
          promptBudgetTokens: 8_000,
          summaryInputBudget: 5_000,
        },
      },
    ],
    'xstate.done.actor.compaction': [
      { output: COMPACTED },
      { output: { ...COMPACTED, status: 'unchanged', itemsAfter: 12, historyRef: 't1:history:synced' } },
      {
        output: {
          ...COMPACTED,
          status: 'failed',
          itemsAfter: 12,
          historyRef: 't1:history:synced',
          failure: { reason: 'empty-summary', message: 'provider returned an empty summary' },
        },
      },
    ],
    'xstate.error.actor.compaction': [{ error: new Error('unexpected compaction crash') }],
    'xstate.done.actor.rebuildProjection': [
      {
        output: {
          projectionRef: 't1:projection:rebuilt',
          itemCount: 5,
          projectedTokens: 2_000,
          pressureTokens: 3_000,
        },
      },
    ],
    'xstate.error.actor.rebuildProjection': [{ error: new Error('projection failed') }],
  },
  project: (s) => {
    const c = s.context as TurnContext;
    return {
      value: s.value,
      decision: c.decision,
      guardReason: c.guardReason,
      compaction: c.compaction?.status ?? null,
      failure: c.compaction?.failure?.reason ?? null,
      projectionRef: c.projectionRef,
    };
  },
  inputs: [
    { name: 'fresh session', input: base },
    {
      name: 'after 2 failures',
      input: {
        ...base,
        loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
      },
    },
    {
      name: 'after an ineffective pass',
      input: {
        ...base,
        loopGuard: { consecutiveFailures: 0, lastFreedRatio: 0.01, turnsSinceCompaction: 5 },
      },
    },
    {
      name: 'refilled after 1 turn',
      input: { ...base, loopGuard: { consecutiveFailures: 0, lastFreedRatio: 0.4, turnsSinceCompaction: 1 } },
    },
    {
      name: 'recovery bypasses the guard',
      input: {
        ...base,
        mode: 'recovery',
        loopGuard: { consecutiveFailures: 2, lastFreedRatio: null, turnsSinceCompaction: null },
      },
    },
  ],
};
