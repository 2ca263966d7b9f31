import { assign, setup } from 'xstate';
import { compactionMachine } from '../compaction/compaction.machine.js';
import type { CompactionOutput } from '../compaction/compaction.types.js';
import { toFailure } from '../shared/failure.js';
import { placeholder } from '../shared/placeholder.js';
import { loopGuardReason } from './loop-guard.js';
import type {
  ClearToFitInput,
  ClearToFitOutput,
  ClearToolResultsInput,
  ClearToolResultsOutput,
  EstimatePressureInput,
  EstimatePressureOutput,
  LoopGuardReason,
  NormalizeProjectionInput,
  NormalizeProjectionOutput,
  RebuildProjectionInput,
  RebuildProjectionOutput,
  SyncHistoryInput,
  SyncHistoryOutput,
  TurnContext,
  TurnEvent,
  TurnInput,
  TurnOutput,
} from './turn.types.js';

type Report = { report: CompactionOutput };

/** The context a clearing step leaves: its projection and its counts (C10). */
function clearedProjection(params: ClearToolResultsOutput) {
  return {
    projectionRef: params.projectionRef,
    projectionItems: params.itemCount,
    clearing: {
      tokensBefore: params.tokensBefore,
      tokensAfter: params.tokensAfter,
      clearedCount: params.clearedCount,
      protectedBatchCount: params.protectedBatchCount,
      protectedResultCount: params.protectedResultCount ?? 0,
      clearedInputCount: params.clearedInputCount ?? 0,
    },
  };
}

/**
 * The turn machine's named actors, actions and guards; the chart that uses them is in
 * turn.machine.ts. Actions and guards read what they need from `params`.
 */
export const turnSetup = setup({
  types: {
    context: {} as TurnContext,
    events: {} as TurnEvent,
    input: {} as TurnInput,
    output: {} as TurnOutput,
  },
  actors: {
    syncHistory: placeholder<SyncHistoryOutput, SyncHistoryInput>('syncHistory'),
    normalizeProjection: placeholder<NormalizeProjectionOutput, NormalizeProjectionInput>(
      'normalizeProjection',
    ),
    clearToolResults: placeholder<ClearToolResultsOutput, ClearToolResultsInput>('clearToolResults'),
    estimatePressure: placeholder<EstimatePressureOutput, EstimatePressureInput>('estimatePressure'),
    compaction: compactionMachine,
    clearToFit: placeholder<ClearToFitOutput, ClearToFitInput>('clearToFit'),
    rebuildProjection: placeholder<RebuildProjectionOutput, RebuildProjectionInput>('rebuildProjection'),
  },
  actions: {
    storeSyncedHistory: assign((_, params: SyncHistoryOutput) => ({
      historyRef: params.historyRef,
      itemsBefore: params.itemCount,
      syncedCount: params.syncedCount,
    })),
    storeNormalizedProjection: assign((_, params: NormalizeProjectionOutput) => ({
      projectionRef: params.projectionRef,
      projectionItems: params.itemCount,
    })),
    storeClearedProjection: assign((_, params: ClearToolResultsOutput) => clearedProjection(params)),
    storeFittedProjection: assign((_, params: ClearToFitOutput) => ({
      ...clearedProjection(params),
      fitted: { projectedTokens: params.projectedTokens, pressureTokens: params.pressureTokens },
    })),
    storePressure: assign((_, params: EstimatePressureOutput) => ({ pressure: params })),
    assignGuardReason: assign((_, params: { reason: LoopGuardReason }) => ({ guardReason: params.reason })),
    storeCompaction: assign((_, params: Report) => ({ compaction: params.report })),
    storeRebuiltProjection: assign((_, params: RebuildProjectionOutput) => ({
      rebuilt: params,
      projectionRef: params.projectionRef,
      projectionItems: params.itemCount,
    })),
    // The pass is reported as failed and the old history stays, rather than a half-applied pass.
    recordRebuildFailure: assign(({ context }, params: { error: unknown }) => ({
      compaction: context.compaction && {
        ...context.compaction,
        status: 'failed' as const,
        historyRef: context.historyRef,
        itemsAfter: context.itemsBefore,
        failure: toFailure('rebuild-error', params.error),
      },
    })),
  },
  guards: {
    isBelowThreshold: ({ context }) =>
      context.pressure === null ||
      context.pressure.thresholdTokens === null ||
      context.pressure.pressureTokens < context.pressure.thresholdTokens,
    isLoopGuardTripped: ({ context }, params: { reason: LoopGuardReason }) =>
      context.mode === 'automatic' &&
      loopGuardReason(context.loopGuard, context.loopGuardPolicy) === params.reason,
    // The next request would not fit the prompt budget (H4), so the loop guard's pass-over needs clearing (§14).
    isOverPromptBudget: ({ context }) =>
      context.pressure !== null &&
      context.pressure.promptBudgetTokens !== null &&
      context.pressure.pressureTokens > context.pressure.promptBudgetTokens,
    isCompacted: (_, params: Report) => params.report.status === 'compacted',
    isUnchanged: (_, params: Report) => params.report.status === 'unchanged',
  },
});
