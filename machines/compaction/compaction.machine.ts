import { finalStateOf } from '../shared/outcome.js';
import type {
  CompactedHistory,
  CompactInlineOutput,
  CompactionContext,
  CompactionOutput,
  CompactionStatus,
} from './compaction.types.js';
import { compactionSetup } from './compaction.setup.js';

/** The ways a pass ends; each is a final state and the output's `status`. */
const OUTCOMES: readonly CompactionStatus[] = ['compacted', 'unchanged', 'failed'];

const summaryInput = ({ context }: { context: CompactionContext }) => ({
  turnId: context.turnId,
  historyRef: context.historyRef,
  band: 'flat' as const,
  budget: context.budget,
  maxOverflowRetries: context.maxOverflowRetries,
  retryBackoffMs: context.retryBackoffMs,
});

/** The history before the pass and the rebuilt one, for the receipt's steps. */
const receiptInput = (context: CompactionContext) => ({
  turnId: context.turnId,
  historyRef: context.historyRef,
  compactedRef: context.result?.historyRef ?? context.historyRef,
});

/** The compacted window of an inline reply, or null when it asks for the Local fallback. */
function inlineResult(output: CompactInlineOutput): CompactedHistory | null {
  return output.kind === 'compacted'
    ? { historyRef: output.historyRef, itemCount: output.itemCount, tokens: output.tokens }
    : null;
}

/**
 * One compaction pass: run the route's strategy on the FULL
 * history; NativeInline falls back to Local; Local summarizes through the capacity-retry
 * ladder (or two bands), rejects bad summaries and rebuilds the history. A pass that fails
 * or does not shrink the history reports the original history ref unchanged.
 */
export const compactionMachine = compactionSetup.createMachine({
  id: 'compaction',
  description: 'One compaction pass over the full session history.',
  initial: 'resolvingStrategy',
  context: ({ input }) => ({
    turnId: input.turnId,
    mode: input.mode,
    requestedStrategy: input.strategy,
    strategy: input.strategy,
    nativeClients: input.nativeClients ?? { standalone: true, inline: true },
    hierarchical: input.hierarchical ?? false,
    budget: input.budget,
    maxOverflowRetries: input.maxOverflowRetries,
    retryBackoffMs: input.retryBackoffMs,
    historyRef: input.historyRef,
    itemsBefore: input.itemsBefore,
    compactableItems: input.compactableItems ?? null,
    nativeBudget: input.nativeBudget ?? null,
    nothingToCompact: false,
    startedAt: input.startedAt,
    fallbackReason: null,
    summary: null,
    summaryCalls: 0,
    repairRequests: 0,
    result: null,
    receiptRef: null,
    receiptItems: 0,
    receiptMissing: 0,
    amendedItems: 0,
    failure: null,
  }),
  states: {
    resolvingStrategy: {
      description:
        'Routes to the strategy chosen for this provider/model; a native strategy whose client the route lacks runs Local.',
      always: [
        { guard: 'isNativeStandalone', target: 'nativeStandalone' },
        { guard: 'isNativeInline', target: 'measuringInline' },
        {
          guard: 'isNativeClientMissing',
          target: 'local',
          description: 'No client for the native strategy: the Local summary works everywhere.',
          actions: { type: 'fallBackToLocal', params: { reason: 'no-client' } },
        },
        { target: 'local' },
      ],
    },
    nativeStandalone: {
      description:
        'POST /responses/compact through the capacity-retry ladder (band native): the history bounded to the native budget (marker kept), halved on a capacity rejection. A window is adopted as returned; a failure, or capacity past the retries, falls back to Local.',
      invoke: {
        id: 'compactStandalone',
        src: 'compactStandalone',
        input: ({ context }) => ({
          turnId: context.turnId,
          historyRef: context.historyRef,
          band: 'native' as const,
          budget: context.nativeBudget,
          maxOverflowRetries: context.maxOverflowRetries,
          retryBackoffMs: context.retryBackoffMs,
        }),
        onDone: [
          {
            guard: { type: 'isSummaryReady', params: ({ event }) => ({ outcome: event.output }) },
            target: 'adoptingNativeWindow',
            actions: { type: 'countLadderCalls', params: ({ event }) => ({ outcome: event.output }) },
          },
          {
            target: 'local',
            description: 'The standalone endpoint failed: use the Local summary, which works everywhere.',
            actions: [
              { type: 'countLadderCalls', params: ({ event }) => ({ outcome: event.output }) },
              { type: 'fallBackToLocal', params: { reason: 'standalone-error' } },
            ],
          },
        ],
      },
    },
    adoptingNativeWindow: {
      description:
        "The endpoint's window becomes the next history, the history's leading system messages kept.",
      invoke: {
        id: 'adoptNativeWindow',
        src: 'adoptNativeWindow',
        input: ({ context, event }) => ({
          turnId: context.turnId,
          historyRef: context.historyRef,
          windowRef: (event as { output?: { summaryRefs?: string[] } }).output?.summaryRefs?.[0] ?? '',
        }),
        onDone: {
          target: 'checkingShrink',
          actions: { type: 'storeResult', params: ({ event }) => ({ result: event.output }) },
        },
        onError: {
          target: 'local',
          description: 'The window could not be adopted: use Local.',
          actions: { type: 'fallBackToLocal', params: { reason: 'standalone-error' } },
        },
      },
    },
    measuringInline: {
      description:
        "Sizes the inline request as it would be sent; under the compact edit's trigger it cannot compact, so it is not sent.",
      invoke: {
        id: 'measureInline',
        src: 'measureInline',
        input: ({ context }) => ({ turnId: context.turnId, historyRef: context.historyRef }),
        onDone: [
          {
            guard: { type: 'isInlineBelowTrigger', params: ({ event }) => ({ measured: event.output }) },
            target: 'local',
            description: 'The history is under the compact trigger: no inline call; use Local.',
            actions: { type: 'fallBackToLocal', params: { reason: 'below-trigger' } },
          },
          { target: 'nativeInline' },
        ],
        onError: {
          target: 'local',
          description: 'The inline request cannot be built: use Local.',
          actions: { type: 'fallBackToLocal', params: { reason: 'inline-error' } },
        },
      },
    },
    nativeInline: {
      description: 'Generate request with the compact edit ladder; falls back to Local.',
      invoke: {
        id: 'compactInline',
        src: 'compactInline',
        input: ({ context }) => ({ turnId: context.turnId, historyRef: context.historyRef }),
        onDone: [
          {
            guard: { type: 'isInlineFallback', params: ({ event }) => ({ output: event.output }) },
            target: 'local',
            description: 'no-compaction, rejected-edit or null-content: use Local.',
            actions: [
              'countNativeCall',
              {
                type: 'fallBackToLocal',
                params: ({ event }) => ({
                  reason: event.output.kind === 'fallback' ? event.output.reason : null,
                }),
              },
            ],
          },
          {
            target: 'checkingShrink',
            actions: [
              'countNativeCall',
              { type: 'storeResult', params: ({ event }) => ({ result: inlineResult(event.output) }) },
            ],
          },
        ],
        onError: {
          target: 'local',
          description: 'The inline request failed: use Local.',
          actions: ['countNativeCall', { type: 'fallBackToLocal', params: { reason: 'inline-error' } }],
        },
      },
    },
    local: {
      description: 'Local summary: summarize, validate, rebuild, check the receipt and amend.',
      initial: 'choosingShape',
      states: {
        choosingShape: {
          description:
            'Nothing before the kept recent context (and no model switch): unchanged without a call; else a flat summary, or two bands when the input asks for hierarchical.',
          always: [
            {
              guard: 'hasNothingToCompact',
              target: '#compaction.unchanged',
              actions: 'markNothingToCompact',
            },
            { guard: 'isHierarchical', target: 'summarizingHierarchically' },
            { target: 'summarizingFlat' },
          ],
        },
        summarizingFlat: {
          description: 'One summary through the capacity-retry ladder.',
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
                description: 'No summary: budget, capacity, empty or provider failure.',
                actions: [
                  { type: 'recordSummary', params: ({ event }) => ({ outcome: event.output }) },
                  { type: 'recordSummaryFailure', params: ({ event }) => ({ outcome: event.output }) },
                ],
              },
            ],
          },
        },
        summarizingHierarchically: {
          description: 'Older and newer bands, both validated before either call.',
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
                description: 'A band failed or preparation ran out of budget.',
                actions: [
                  { type: 'recordSummary', params: ({ event }) => ({ outcome: event.output }) },
                  { type: 'recordSummaryFailure', params: ({ event }) => ({ outcome: event.output }) },
                ],
              },
            ],
          },
        },
        validatingSummary: {
          description: 'Rejects truncated, template-less or oversized summaries.',
          always: [
            {
              guard: 'isSummaryTruncated',
              target: '#compaction.failed',
              actions: {
                type: 'rejectSummary',
                params: { reason: 'summary-truncated', message: 'summary was cut off by the output limit' },
              },
            },
            {
              guard: 'isSummaryTemplateLess',
              target: '#compaction.failed',
              actions: {
                type: 'rejectSummary',
                params: {
                  reason: 'summary-template-less',
                  message: 'summary does not follow the summary template',
                },
              },
            },
            {
              guard: 'isSummaryLargerThanInput',
              target: '#compaction.failed',
              actions: {
                type: 'rejectSummary',
                params: { reason: 'summary-larger-than-input', message: 'summary is larger than its input' },
              },
            },
            { target: 'rebuildingHistory' },
          ],
        },
        rebuildingHistory: {
          description: 'Summary + retained messages + continuity tail, bounded to the context.',
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
              target: 'checkingReceipt',
              actions: { type: 'storeResult', params: ({ event }) => ({ result: event.output }) },
            },
            onError: {
              target: '#compaction.failed',
              actions: { type: 'recordRebuildFailure', params: ({ event }) => ({ error: event.error }) },
            },
          },
        },
        checkingReceipt: {
          description:
            'Lists what the replaced span must keep (latest request, corrections, unresolved errors, paths, commands, ids) and where each landed in the rebuilt history.',
          invoke: {
            id: 'checkReceipt',
            src: 'checkReceipt',
            input: ({ context }) => receiptInput(context),
            onDone: [
              {
                guard: { type: 'hasMissingReceiptItems', params: ({ event }) => ({ receipt: event.output }) },
                target: 'amendingSummary',
                actions: { type: 'storeReceipt', params: ({ event }) => ({ receipt: event.output }) },
              },
              {
                target: '#compaction.checkingShrink',
                actions: { type: 'storeReceipt', params: ({ event }) => ({ receipt: event.output }) },
              },
            ],
            onError: {
              target: '#compaction.failed',
              actions: { type: 'recordRebuildFailure', params: ({ event }) => ({ error: event.error }) },
            },
          },
        },
        amendingSummary: {
          description: 'Adds the missing items verbatim to the summary; no model call.',
          invoke: {
            id: 'amendSummary',
            src: 'amendSummary',
            input: ({ context }) => ({
              ...receiptInput(context),
              receiptRef: context.receiptRef ?? '',
            }),
            onDone: {
              target: '#compaction.checkingShrink',
              actions: [
                'recordAmendment',
                { type: 'storeResult', params: ({ event }) => ({ result: event.output }) },
              ],
            },
            onError: {
              target: '#compaction.failed',
              actions: { type: 'recordRebuildFailure', params: ({ event }) => ({ error: event.error }) },
            },
          },
        },
      },
    },
    checkingShrink: {
      description:
        'The new history must hold fewer items or, by the runtime estimate, fewer tokens; otherwise the pass is a no-op (the "86 → 88" guard).',
      always: [{ guard: 'isUnchanged', target: 'unchanged' }, { target: 'compacted' }],
    },
    compacted: {
      type: 'final',
      description: 'History replaced by the compacted window.',
    },
    unchanged: {
      type: 'final',
      description: 'The pass gained nothing; the untouched history is reported.',
    },
    failed: {
      type: 'final',
      description: 'The untouched history and the bounded root cause are reported.',
    },
  },
  output: ({ context, event }): CompactionOutput => {
    const status = finalStateOf(event, OUTCOMES);
    const result = status === 'compacted' ? context.result : null;
    return {
      status,
      mode: context.mode,
      requestedStrategy: context.requestedStrategy,
      strategy: context.strategy,
      fallbackReason: context.fallbackReason,
      itemsBefore: context.itemsBefore,
      itemsAfter: result?.itemCount ?? context.itemsBefore,
      historyRef: result?.historyRef ?? context.historyRef,
      summaryCalls: context.summaryCalls,
      repairRequests: context.repairRequests,
      nothingToCompact: context.nothingToCompact,
      summaryTokens: context.summary?.summaryTokens ?? 0,
      receiptRef: context.receiptRef,
      receiptItems: context.receiptItems,
      amendedItems: context.amendedItems,
      startedAt: context.startedAt,
      failure: context.failure,
    };
  },
});
