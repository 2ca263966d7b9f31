import { assign, setup } from 'xstate';
import { capacityRetryMachine } from '../capacity-retry/capacity-retry.machine.js';
import { hierarchicalSummaryMachine } from '../hierarchical-summary/hierarchical-summary.machine.js';
import { toFailure, type FailureReason } from '../shared/failure.js';
import { placeholder } from '../shared/placeholder.js';
import type { SummaryOutcome } from '../shared/summary.types.js';
import type {
  CompactedHistory,
  CompactInlineOutput,
  CompactionContext,
  CompactionEvent,
  CompactionInput,
  CompactionOutput,
  CompactStandaloneOutput,
  InlineFallbackReason,
  NativeCompactInput,
  RebuildHistoryInput,
  RebuildHistoryOutput,
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
    compactStandalone: placeholder<CompactStandaloneOutput, NativeCompactInput>('compactStandalone'),
    compactInline: placeholder<CompactInlineOutput, NativeCompactInput>('compactInline'),
    capacityRetry: capacityRetryMachine,
    hierarchicalSummary: hierarchicalSummaryMachine,
    rebuildHistory: placeholder<RebuildHistoryOutput, RebuildHistoryInput>('rebuildHistory'),
  },
  actions: {
    countNativeCall: assign(({ context }) => ({ summaryCalls: context.summaryCalls + 1 })),
    storeResult: assign((_, params: { result: CompactedHistory | null }) => ({ result: params.result })),
    recordProviderFailure: assign((_, params: Thrown) => ({
      failure: toFailure('provider-error', params.error),
    })),
    fallBackToLocal: assign((_, params: { reason: InlineFallbackReason | null }) => ({
      strategy: 'local' as const,
      fallbackReason: params.reason,
    })),
    recordSummary: assign(({ context }, params: Summarized) => ({
      summary: params.outcome,
      summaryCalls: context.summaryCalls + params.outcome.calls,
    })),
    recordSummaryFailure: assign((_, params: Summarized) => ({ failure: params.outcome.failure })),
    rejectSummary: assign((_, params: { reason: FailureReason; message: string }) => ({
      failure: { reason: params.reason, message: params.message },
    })),
    recordRebuildFailure: assign((_, params: Thrown) => ({
      failure: toFailure('rebuild-error', params.error),
    })),
  },
  guards: {
    isNativeStandalone: ({ context }) => context.requestedStrategy === 'nativeStandalone',
    isNativeInline: ({ context }) => context.requestedStrategy === 'nativeInline',
    isHierarchical: ({ context }) => context.hierarchical,
    isInlineFallback: (_, params: { output: CompactInlineOutput }) => params.output.kind === 'fallback',
    isSummaryReady: (_, params: Summarized) => params.outcome.status === 'done',
    isSummaryTruncated: ({ context }) => context.summary?.truncated === true,
    isSummaryTemplateLess: ({ context }) => context.summary?.followsTemplate === false,
    isSummaryLargerThanInput: ({ context }) =>
      context.summary !== null && context.summary.summaryTokens > context.summary.inputTokens,
    isUnchanged: ({ context }) =>
      context.result === null ||
      (context.result.shrank !== true && context.result.itemCount >= context.itemsBefore),
  },
});
