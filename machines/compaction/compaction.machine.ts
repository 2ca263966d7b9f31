import { assign, setup } from 'xstate';
import { capacityRetryMachine } from '../capacity-retry/capacity-retry.machine.js';
import { hierarchicalSummaryMachine } from '../hierarchical-summary/hierarchical-summary.machine.js';
import { toFailure } from '../shared/failure.js';
import { placeholder } from '../shared/placeholder.js';
import type { SummaryOutcome } from '../shared/summary.types.js';
import type {
  CompactInlineOutput,
  CompactStandaloneOutput,
  CompactionContext,
  CompactionEvent,
  CompactionInput,
  CompactionOutput,
  NativeCompactInput,
  RebuildHistoryInput,
  RebuildHistoryOutput,
} from './compaction.types.js';

const summaryInput = ({ context }: { context: CompactionContext }) => ({
  turnId: context.turnId,
  historyRef: context.historyRef,
  band: 'flat' as const,
  budget: context.budget,
  maxOverflowRetries: context.maxOverflowRetries,
  retryBackoffMs: context.retryBackoffMs,
});

/**
 * One compaction pass (SPEC S1–S5, A4, L4–L7, §14): run the route's strategy on the FULL
 * history; NativeInline falls back to Local; Local summarizes through the capacity-retry
 * ladder (or two bands), rejects bad summaries and rebuilds the history. A pass that fails
 * or does not shrink the history reports the original history ref unchanged.
 */
export const compactionMachine = setup({
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
    recordSummary: assign(({ context }, params: { outcome: SummaryOutcome }) => ({
      summary: params.outcome,
      summaryCalls: context.summaryCalls + params.outcome.calls,
    })),
  },
  guards: {
    isNativeStandalone: ({ context }) => context.requestedStrategy === 'nativeStandalone',
    isNativeInline: ({ context }) => context.requestedStrategy === 'nativeInline',
    isHierarchical: ({ context }) => context.hierarchical,
    isInlineFallback: (_, params: { output: CompactInlineOutput }) => params.output.kind === 'fallback',
    isSummaryReady: (_, params: { outcome: SummaryOutcome }) => params.outcome.status === 'done',
    isSummaryTruncated: ({ context }) => context.summary?.truncated === true,
    isSummaryTemplateLess: ({ context }) => context.summary?.followsTemplate === false,
    isSummaryLargerThanInput: ({ context }) =>
      context.summary !== null && context.summary.summaryTokens > context.summary.inputTokens,
    isUnchanged: ({ context }) =>
      context.result === null ||
      (context.result.shrank !== true && context.result.itemCount >= context.itemsBefore),
  },
}).createMachine({
  id: 'compaction',
  description: 'One compaction pass over the full session history (S1–S5).',
  initial: 'resolvingStrategy',
  context: ({ input }) => ({
    turnId: input.turnId,
    mode: input.mode,
    requestedStrategy: input.strategy,
    strategy: input.strategy,
    hierarchical: input.hierarchical ?? false,
    budget: input.budget,
    maxOverflowRetries: input.maxOverflowRetries,
    retryBackoffMs: input.retryBackoffMs,
    historyRef: input.historyRef,
    itemsBefore: input.itemsBefore,
    startedAt: input.startedAt,
    fallbackReason: null,
    summary: null,
    summaryCalls: 0,
    result: null,
    status: null,
    failure: null,
  }),
  states: {
    resolvingStrategy: {
      description: 'Routes to the strategy chosen for this provider/model (S1).',
      always: [
        { guard: 'isNativeStandalone', target: 'nativeStandalone' },
        { guard: 'isNativeInline', target: 'nativeInline' },
        { target: 'local' },
      ],
    },
    nativeStandalone: {
      description: 'POST /responses/compact; its result is canonical, its errors propagate (O1–O3).',
      invoke: {
        id: 'compactStandalone',
        src: 'compactStandalone',
        input: ({ context }) => ({ turnId: context.turnId, historyRef: context.historyRef }),
        onDone: {
          target: 'checkingShrink',
          actions: assign({
            result: ({ event }) => event.output,
            summaryCalls: ({ context }) => context.summaryCalls + 1,
          }),
        },
        onError: {
          target: 'failed',
          actions: assign({
            summaryCalls: ({ context }) => context.summaryCalls + 1,
            failure: ({ event }) => toFailure('provider-error', event.error),
          }),
        },
      },
    },
    nativeInline: {
      description: 'Generate request with the compact edit ladder; falls back to Local (A1–A4).',
      invoke: {
        id: 'compactInline',
        src: 'compactInline',
        input: ({ context }) => ({ turnId: context.turnId, historyRef: context.historyRef }),
        onDone: [
          {
            guard: { type: 'isInlineFallback', params: ({ event }) => ({ output: event.output }) },
            target: 'local',
            description: 'no-compaction, rejected-edit or null-content: use Local (A4).',
            actions: assign({
              strategy: 'local',
              summaryCalls: ({ context }) => context.summaryCalls + 1,
              fallbackReason: ({ event }) => (event.output.kind === 'fallback' ? event.output.reason : null),
            }),
          },
          {
            target: 'checkingShrink',
            actions: assign({
              summaryCalls: ({ context }) => context.summaryCalls + 1,
              result: ({ event }) =>
                event.output.kind === 'compacted'
                  ? {
                      historyRef: event.output.historyRef,
                      itemCount: event.output.itemCount,
                      shrank: event.output.shrank,
                    }
                  : null,
            }),
          },
        ],
        onError: {
          target: 'local',
          description: 'The inline request failed: use Local (vtcode-notes §4).',
          actions: assign({
            strategy: 'local',
            summaryCalls: ({ context }) => context.summaryCalls + 1,
            fallbackReason: 'inline-error',
          }),
        },
      },
    },
    local: {
      description: 'Local summary: summarize, validate (§14), rebuild (L1–L8).',
      initial: 'choosingShape',
      states: {
        choosingShape: {
          description: 'Flat summary, or two bands when the input asks for hierarchical (L4).',
          always: [
            { guard: 'isHierarchical', target: 'summarizingHierarchically' },
            { target: 'summarizingFlat' },
          ],
        },
        summarizingFlat: {
          description: 'One summary through the capacity-retry ladder (L5).',
          invoke: {
            id: 'capacityRetry',
            src: 'capacityRetry',
            input: summaryInput,
            onDone: [
              {
                guard: { type: 'isSummaryReady', params: ({ event }) => ({ outcome: event.output }) },
                target: 'validatingSummary',
                actions: { type: 'recordSummary', params: ({ event }) => ({ outcome: event.output }) },
              },
              {
                target: '#compaction.failed',
                actions: [
                  { type: 'recordSummary', params: ({ event }) => ({ outcome: event.output }) },
                  assign({ failure: ({ event }) => event.output.failure }),
                ],
              },
            ],
          },
        },
        summarizingHierarchically: {
          description: 'Older and newer bands, both validated before either call (L4).',
          invoke: {
            id: 'hierarchicalSummary',
            src: 'hierarchicalSummary',
            input: summaryInput,
            onDone: [
              {
                guard: { type: 'isSummaryReady', params: ({ event }) => ({ outcome: event.output }) },
                target: 'validatingSummary',
                actions: { type: 'recordSummary', params: ({ event }) => ({ outcome: event.output }) },
              },
              {
                target: '#compaction.failed',
                actions: [
                  { type: 'recordSummary', params: ({ event }) => ({ outcome: event.output }) },
                  assign({ failure: ({ event }) => event.output.failure }),
                ],
              },
            ],
          },
        },
        validatingSummary: {
          description: 'Rejects truncated, template-less or oversized summaries (§14).',
          always: [
            {
              guard: 'isSummaryTruncated',
              target: '#compaction.failed',
              actions: assign({
                failure: { reason: 'summary-truncated', message: 'summary was cut off by the output limit' },
              }),
            },
            {
              guard: 'isSummaryTemplateLess',
              target: '#compaction.failed',
              actions: assign({
                failure: {
                  reason: 'summary-template-less',
                  message: 'summary does not follow the summary template',
                },
              }),
            },
            {
              guard: 'isSummaryLargerThanInput',
              target: '#compaction.failed',
              actions: assign({
                failure: { reason: 'summary-larger-than-input', message: 'summary is larger than its input' },
              }),
            },
            { target: 'rebuildingHistory' },
          ],
        },
        rebuildingHistory: {
          description: 'Summary + retained messages + continuity tail, bounded to the context (L7).',
          invoke: {
            id: 'rebuildHistory',
            src: 'rebuildHistory',
            input: ({ context }) => ({
              turnId: context.turnId,
              historyRef: context.historyRef,
              summaryRefs: context.summary?.summaryRefs ?? [],
              mode: context.mode,
            }),
            onDone: {
              target: '#compaction.checkingShrink',
              actions: assign({ result: ({ event }) => event.output }),
            },
            onError: {
              target: '#compaction.failed',
              actions: assign({ failure: ({ event }) => toFailure('rebuild-error', event.error) }),
            },
          },
        },
      },
    },
    checkingShrink: {
      description: 'A pass that does not shrink the item count is a no-op (the "86 → 88" guard).',
      always: [{ guard: 'isUnchanged', target: 'unchanged' }, { target: 'compacted' }],
    },
    compacted: {
      type: 'final',
      description: 'History replaced by the compacted window.',
      entry: assign({ status: 'compacted' }),
    },
    unchanged: {
      type: 'final',
      description: 'Nothing to gain; history and projection stay as they were.',
      entry: assign({ status: 'unchanged', result: null }),
    },
    failed: {
      type: 'final',
      description: 'History unchanged; the bounded root cause is reported (S4).',
      entry: assign({ status: 'failed', result: null }),
    },
  },
  output: ({ context }): CompactionOutput => ({
    status: context.status ?? 'failed',
    mode: context.mode,
    requestedStrategy: context.requestedStrategy,
    strategy: context.strategy,
    fallbackReason: context.fallbackReason,
    itemsBefore: context.itemsBefore,
    itemsAfter: context.result?.itemCount ?? context.itemsBefore,
    historyRef: context.result?.historyRef ?? context.historyRef,
    summaryCalls: context.summaryCalls,
    summaryTokens: context.summary?.summaryTokens ?? 0,
    startedAt: context.startedAt,
    failure: context.failure,
  }),
});
