import { assign, setup } from 'xstate';
import { capacityRetryMachine } from '../capacity-retry/capacity-retry.machine.js';
import { hierarchicalSummaryMachine } from '../hierarchical-summary/hierarchical-summary.machine.js';
import { toFailure, type FailureReason } from '../shared/failure.js';
import { placeholder } from '../shared/placeholder.js';
import { didShrink } from './compaction.types.js';
import type { SummaryOutcome } from '../shared/summary.types.js';
import type {
  AdoptNativeWindowInput,
  CompactedHistory,
  CompactInlineOutput,
  CompactionContext,
  CompactionEvent,
  CompactionInput,
  CompactionOutput,
  InlineFallbackReason,
  MeasureInlineOutput,
  NativeCompactInput,
  RebuildHistoryInput,
  RebuildHistoryOutput,
  ReceiptCheck,
  ReceiptInput,
} from './compaction.types.js';

type Thrown = { error: unknown };
type Summarized = { outcome: SummaryOutcome };

/**
 * The compaction machine's named actors, actions and guards; the chart that uses them is in
 * compaction.machine.ts. Actions and guards read what they need from `params`.
 */
export const compactionSetup = setup({
  types: {
    context: {} as CompactionContext,
    events: {} as CompactionEvent,
    input: {} as CompactionInput,
    output: {} as CompactionOutput,
  },
  actors: {
    // The standalone endpoint runs the same capacity-retry ladder as a summary (band `native`).
    compactStandalone: capacityRetryMachine,
    adoptNativeWindow: placeholder<CompactedHistory, AdoptNativeWindowInput>('adoptNativeWindow'),
    measureInline: placeholder<MeasureInlineOutput, NativeCompactInput>('measureInline'),
    compactInline: placeholder<CompactInlineOutput, NativeCompactInput>('compactInline'),
    capacityRetry: capacityRetryMachine,
    hierarchicalSummary: hierarchicalSummaryMachine,
    rebuildHistory: placeholder<RebuildHistoryOutput, RebuildHistoryInput>('rebuildHistory'),
    checkReceipt: placeholder<ReceiptCheck, ReceiptInput>('checkReceipt'),
    amendSummary: placeholder<CompactedHistory, ReceiptInput & { receiptRef: string }>('amendSummary'),
  },
  actions: {
    countNativeCall: assign(({ context }) => ({ summaryCalls: context.summaryCalls + 1 })),
    markNothingToCompact: assign({ nothingToCompact: true }),
    countLadderCalls: assign(({ context }, params: Summarized) => ({
      summaryCalls: context.summaryCalls + params.outcome.calls,
      repairRequests: context.repairRequests + params.outcome.repairs,
    })),
    storeResult: assign((_, params: { result: CompactedHistory | null }) => ({ result: params.result })),
    fallBackToLocal: assign((_, params: { reason: InlineFallbackReason | null }) => ({
      strategy: 'local' as const,
      fallbackReason: params.reason,
    })),
    recordSummary: assign(({ context }, params: Summarized) => ({
      summary: params.outcome,
      summaryCalls: context.summaryCalls + params.outcome.calls,
      repairRequests: context.repairRequests + params.outcome.repairs,
    })),
    recordSummaryFailure: assign((_, params: Summarized) => ({ failure: params.outcome.failure })),
    rejectSummary: assign((_, params: { reason: FailureReason; message: string }) => ({
      failure: { reason: params.reason, message: params.message },
    })),
    storeReceipt: assign((_, params: { receipt: ReceiptCheck }) => ({
      receiptRef: params.receipt.receiptRef,
      receiptItems: params.receipt.items,
      receiptMissing: params.receipt.missing,
    })),
    recordAmendment: assign(({ context }) => ({ amendedItems: context.receiptMissing })),
    recordRebuildFailure: assign((_, params: Thrown) => ({
      failure: toFailure('rebuild-error', params.error),
    })),
  },
  guards: {
    isNativeStandalone: ({ context }) =>
      context.requestedStrategy === 'nativeStandalone' && context.nativeClients.standalone,
    isNativeInline: ({ context }) =>
      context.requestedStrategy === 'nativeInline' && context.nativeClients.inline,
    // A native strategy was asked for, but the route has no client for it (checked after both above).
    isNativeClientMissing: ({ context }) => context.requestedStrategy !== 'local',
    // A model switch converts even a lone native marker for the new model, so it always runs.
    hasNothingToCompact: ({ context }) => context.compactableItems === 0 && context.mode !== 'modelSwitch',
    // A request under the compact edit's trigger cannot compact, so it is not sent.
    isInlineBelowTrigger: (_, params: { measured: MeasureInlineOutput }) =>
      params.measured.inputTokens < params.measured.triggerTokens,
    isHierarchical: ({ context }) => context.hierarchical,
    isInlineFallback: (_, params: { output: CompactInlineOutput }) => params.output.kind === 'fallback',
    isSummaryReady: (_, params: Summarized) => params.outcome.status === 'done',
    isSummaryTruncated: ({ context }) => context.summary?.truncated === true,
    isSummaryTemplateLess: ({ context }) => context.summary?.followsTemplate === false,
    isSummaryLargerThanInput: ({ context }) =>
      context.summary !== null && context.summary.summaryTokens > context.summary.inputTokens,
    // Items of the receipt the rebuilt history lacks are added to the summary verbatim.
    hasMissingReceiptItems: (_, params: { receipt: ReceiptCheck }) => params.receipt.missing > 0,
    isUnchanged: ({ context }) => context.result === null || !didShrink(context.result, context.itemsBefore),
  },
});
