import { nextLoopGuardState } from './loop-guard.js';
import type { PreflightAdvisory, TurnContext, TurnDecision, TurnOutput } from './turn.types.js';

/** Preflight: how much of the prompt budget the next request uses; it reports, it never blocks. */
export function preflight(estimatedTokens: number, budgetTokens: number | null): PreflightAdvisory {
  if (budgetTokens === null || budgetTokens <= 0)
    return { estimatedTokens, budgetTokens, percentUsed: null, overBudget: false };
  return {
    estimatedTokens,
    budgetTokens,
    percentUsed: Math.round((estimatedTokens / budgetTokens) * 100),
    overBudget: estimatedTokens > budgetTokens,
  };
}

/** Pressure of the next request: after fitting, the rebuild or clearing first when one ran, else as estimated. */
function currentPressure(context: TurnContext): number | null {
  return (
    context.fitted?.pressureTokens ??
    context.rebuilt?.pressureTokens ??
    context.clearedFirst?.pressureTokens ??
    context.pressure?.pressureTokens ??
    null
  );
}

/**
 * What a turn that ended in the final state `decision` reports. Only a compacted turn hands
 * back the compacted history; every other outcome keeps the synced history and projection.
 * A cancelled turn neither reports an advisory nor ages the loop guard.
 */
export function turnOutput(context: TurnContext, decision: TurnDecision): TurnOutput {
  const compacted = decision === 'compacted' ? context.compaction : null;
  return {
    decision,
    guardReason: context.guardReason,
    strategy: context.compaction?.strategy ?? null,
    fallbackReason: context.compaction?.fallbackReason ?? null,
    summaryCalls: context.compaction?.summaryCalls ?? 0,
    repairRequests: context.compaction?.repairRequests ?? 0,
    historyRef: compacted?.historyRef ?? context.historyRef,
    requestRef: context.projectionRef,
    items: { before: context.itemsBefore, after: compacted?.itemsAfter ?? context.itemsBefore },
    tokens: {
      beforeClearing: context.clearing?.tokensBefore ?? null,
      afterClearing: context.clearing?.tokensAfter ?? null,
      afterCompaction: compacted ? (context.rebuilt?.projectedTokens ?? null) : null,
    },
    clearing: context.clearing && {
      clearedResults: context.clearing.clearedCount,
      protectedBatches: context.clearing.protectedBatchCount,
      protectedResults: context.clearing.protectedResultCount ?? 0,
      clearedInputs: context.clearing.clearedInputCount ?? 0,
    },
    clearedToFit: context.fitted !== null,
    fit: context.fitted && {
      tokensBefore: context.fitted.tokensBefore,
      tokensAfter: context.fitted.projectedTokens,
      clearedResults: context.fitted.clearedResults,
      previewedResults: context.fitted.previewedResults,
      droppedMessages: context.fitted.droppedMessages,
    },
    pressureTokens: currentPressure(context),
    thresholdTokens: context.pressure?.thresholdTokens ?? null,
    advisory:
      decision === 'cancelled'
        ? null
        : preflight(currentPressure(context) ?? 0, context.pressure?.promptBudgetTokens ?? null),
    compaction: context.compaction,
    loopGuard:
      decision === 'cancelled'
        ? context.given.loopGuard
        : nextLoopGuardState(
            context.given.loopGuard,
            decision,
            context.pressure?.pressureTokens ?? null,
            context.rebuilt?.pressureTokens ?? null,
          ),
    cacheCycle: context.cacheCycle,
    lastSent: context.projectionSent,
    fixedPart: context.pressure?.fixedPart ?? null,
    startedAt: context.given.startedAt,
  };
}
