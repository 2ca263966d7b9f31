import { assign, setup } from 'xstate';
import { compactionMachine } from '../compaction/compaction.machine.js';
import type { CompactionOutput } from '../compaction/compaction.types.js';
import { toFailure } from '../shared/failure.js';
import { placeholder } from '../shared/placeholder.js';
import { cycleAfterPass, cycleOrFirst, nextCacheCycle, turnsPerPass, turnThreshold } from './cache-policy.js';
import { loopGuardReason } from './loop-guard.js';
import { isFixedPartTooLarge, isOverPromptBudget } from './request-fit.js';
import type {
  ClearBeforeCompactingInput,
  ClearBeforeCompactingOutput,
  ClearToolResultsInput,
  ClearToolResultsOutput,
  EstimatePressureInput,
  EstimatePressureOutput,
  FitRequestInput,
  FitRequestOutput,
  LoopGuardReason,
  NormalizeProjectionInput,
  NormalizeProjectionOutput,
  Pressure,
  RebuildProjectionInput,
  RebuildProjectionOutput,
  SyncHistoryInput,
  SyncHistoryOutput,
  TurnContext,
  TurnDecision,
  TurnEvent,
  TurnInput,
  TurnOutput,
} from './turn.types.js';

type Report = { report: CompactionOutput };

/**
 * What the turn decides from a measured request: this turn's threshold (put off while the
 * cache holds and the wait can pay), the turns a pass would buy, and the cache cycle advanced
 * by the request. The request becomes the one later decisions compare against.
 */
function decidePressure(context: TurnContext, m: EstimatePressureOutput) {
  const { policy } = context.given;
  const cacheCycle = nextCacheCycle(
    cycleOrFirst(context.cacheCycle, policy),
    m.prefixIntact,
    m.pressureTokens,
  );
  const thresholdTokens = turnThreshold(policy, cacheCycle, m.prefixIntact);
  const pressure: Pressure = {
    pressureTokens: m.pressureTokens,
    projectedTokens: m.projectedTokens,
    thresholdTokens,
    promptBudgetTokens: policy.promptBudgetTokens,
    summaryInputBudget: policy.summaryInputBudget,
    turnsPerPass: turnsPerPass(policy, thresholdTokens, m.newestStepTokens),
    ...(m.fixedPart ? { fixedPart: m.fixedPart } : {}),
  };
  return { pressure, cacheCycle, lastSent: m.sent, projectionSent: m.sent };
}

/** The context a clearing step leaves: its projection and its counts. */
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
    clearBeforeCompacting: placeholder<ClearBeforeCompactingOutput, ClearBeforeCompactingInput>(
      'clearBeforeCompacting',
    ),
    fitRequest: placeholder<FitRequestOutput, FitRequestInput>('fitRequest'),
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
    // A cleared request under the threshold is the one later decisions compare against.
    storeClearedFirst: assign(({ context }, params: ClearBeforeCompactingOutput) => {
      const threshold = context.pressure?.thresholdTokens ?? null;
      return {
        ...clearedProjection(params),
        clearedFirst: { pressureTokens: params.pressureTokens },
        projectionSent: params.sent,
        lastSent: threshold !== null && params.pressureTokens < threshold ? params.sent : context.lastSent,
      };
    }),
    storeFittedRequest: assign((_, params: FitRequestOutput) => {
      const { projectionRef, itemCount, sent, ...fitted } = params;
      return {
        projectionRef,
        projectionItems: itemCount,
        fitted,
        fitTried: true,
        lastSent: sent,
        projectionSent: sent,
      };
    }),
    markFitTried: assign({ fitTried: true }),
    assignOutcome: assign((_, params: { outcome: TurnDecision }) => ({ outcome: params.outcome })),
    storePressure: assign(({ context }, params: EstimatePressureOutput) => decidePressure(context, params)),
    assignGuardReason: assign((_, params: { reason: LoopGuardReason }) => ({ guardReason: params.reason })),
    storeCompaction: assign((_, params: Report) => ({ compaction: params.report })),
    // A pass rewrites the cached prefix: the cache cycle starts again from the rebuilt request.
    storeRebuiltProjection: assign((_, params: RebuildProjectionOutput) => {
      const { sent, ...rebuilt } = params;
      return {
        rebuilt,
        projectionRef: params.projectionRef,
        projectionItems: params.itemCount,
        lastSent: sent,
        projectionSent: sent,
        cacheCycle: cycleAfterPass(params.pressureTokens),
      };
    }),
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
    // The fixed part of a request alone is larger than the window: no projection or pass can help.
    isWindowTooSmall: ({ context }) => isFixedPartTooLarge(context.pressure?.fixedPart),
    isBelowThreshold: ({ context }) =>
      context.pressure === null ||
      context.pressure.thresholdTokens === null ||
      context.pressure.pressureTokens < context.pressure.thresholdTokens,
    isLoopGuardTripped: ({ context }, params: { reason: LoopGuardReason }) =>
      context.given.mode === 'automatic' &&
      loopGuardReason(context.given.loopGuard, context.given.loopGuardPolicy) === params.reason,
    // A summary pass would buy only a few turns (large tool results in a small window): clear first.
    isPassTooShortLived: ({ context }) =>
      context.given.mode === 'automatic' &&
      context.given.minTurnsPerPass > 0 &&
      context.pressure !== null &&
      context.pressure.turnsPerPass !== null &&
      context.pressure.turnsPerPass < context.given.minTurnsPerPass,
    // Clearing made a request that fits the prompt budget (the threshold when the budget is unknown).
    isClearedToFit: ({ context }, params: { output: ClearBeforeCompactingOutput }) => {
      const limit = context.pressure?.promptBudgetTokens ?? context.pressure?.thresholdTokens ?? null;
      return limit !== null && params.output.pressureTokens <= limit;
    },
    // A pass would not leave room for even one step like the newest.
    isPassUseless: ({ context }) =>
      context.pressure?.turnsPerPass != null && context.pressure.turnsPerPass < 1,
    // The request the turn would send is over the prompt budget, whatever the outcome (once: a fitted request is final).
    isOverPromptBudget: ({ context }) =>
      !context.fitTried &&
      isOverPromptBudget(
        context.rebuilt?.pressureTokens ??
          context.clearedFirst?.pressureTokens ??
          context.pressure?.pressureTokens ??
          null,
        context.pressure?.promptBudgetTokens ?? null,
      ),
    isOutcome: ({ context }, params: { outcome: TurnDecision }) => context.outcome === params.outcome,
    isCompacted: (_, params: Report) => params.report.status === 'compacted',
    isUnchanged: (_, params: Report) => params.report.status === 'unchanged',
  },
});
