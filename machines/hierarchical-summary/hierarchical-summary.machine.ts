import { assign, setup } from 'xstate';
import { capacityRetryMachine } from '../capacity-retry/capacity-retry.machine.js';
import { toFailure } from '../shared/failure.js';
import { placeholder } from '../shared/placeholder.js';
import type { SummaryOutcome } from '../shared/summary.types.js';
import type {
  HierarchicalSummaryContext,
  HierarchicalSummaryEvent,
  HierarchicalSummaryInput,
  HierarchicalSummaryOutput,
  PrepareBandsInput,
  PrepareBandsOutput,
} from './hierarchical-summary.types.js';

function combine(context: HierarchicalSummaryContext): HierarchicalSummaryOutput {
  const bands = [context.older, context.newer].filter((b): b is SummaryOutcome => b !== null);
  const failedBand = bands.find((b) => b.status !== 'done');
  const ok = context.failure === null && bands.length === 2 && failedBand === undefined;
  return {
    status: ok ? 'done' : (failedBand?.status ?? 'failed'),
    summaryRefs: ok ? bands.flatMap((b) => b.summaryRefs) : [],
    summaryTokens: bands.reduce((n, b) => n + b.summaryTokens, 0),
    inputTokens: bands.reduce((n, b) => n + b.inputTokens, 0),
    truncated: bands.some((b) => b.truncated),
    // The older band is a one-line abstract; the template applies to the newer (detail) band.
    followsTemplate: context.newer?.followsTemplate ?? false,
    calls: bands.reduce((n, b) => n + b.calls, 0),
    budget: (context.newer ?? context.older)?.budget ?? context.budget,
    failure: context.failure ?? failedBand?.failure ?? null,
  };
}

/**
 * Hierarchical summary (SPEC L4): prepare and validate both bands before spending either
 * call, then summarize the older band and the newer band, each through the capacity-retry
 * ladder (one L5 contract for flat and hierarchical).
 */
export const hierarchicalSummaryMachine = setup({
  types: {
    context: {} as HierarchicalSummaryContext,
    events: {} as HierarchicalSummaryEvent,
    input: {} as HierarchicalSummaryInput,
    output: {} as HierarchicalSummaryOutput,
  },
  actors: {
    prepareBands: placeholder<PrepareBandsOutput, PrepareBandsInput>('prepareBands'),
    capacityRetry: capacityRetryMachine,
  },
  guards: {
    isBandSummarized: (_, params: { outcome: SummaryOutcome }) => params.outcome.status === 'done',
  },
}).createMachine({
  id: 'hierarchicalSummary',
  description: 'L4 two-band summary: both bands validated before either provider call.',
  initial: 'preparingBands',
  context: ({ input }) => ({
    turnId: input.turnId,
    historyRef: input.historyRef,
    budget: input.budget,
    maxOverflowRetries: input.maxOverflowRetries,
    retryBackoffMs: input.retryBackoffMs,
    older: null,
    newer: null,
    failure: null,
  }),
  states: {
    preparingBands: {
      description: 'Splits, prunes and bounds both bands; a budget error here costs zero calls (L4).',
      invoke: {
        id: 'prepareBands',
        src: 'prepareBands',
        input: ({ context }) => ({
          turnId: context.turnId,
          historyRef: context.historyRef,
          budget: context.budget,
        }),
        onDone: { target: 'summarizingOlderBand' },
        onError: {
          target: 'failed',
          actions: assign({
            failure: ({ context, event }) => toFailure('budget', event.error, { budget: context.budget }),
          }),
        },
      },
    },
    summarizingOlderBand: {
      description: 'Abstract of the older band through the capacity-retry ladder.',
      invoke: {
        id: 'capacityRetry',
        src: 'capacityRetry',
        input: ({ context }) => ({
          turnId: context.turnId,
          historyRef: context.historyRef,
          band: 'older' as const,
          budget: context.budget,
          maxOverflowRetries: context.maxOverflowRetries,
          retryBackoffMs: context.retryBackoffMs,
        }),
        onDone: [
          {
            guard: { type: 'isBandSummarized', params: ({ event }) => ({ outcome: event.output }) },
            target: 'summarizingNewerBand',
            actions: assign({ older: ({ event }) => event.output }),
          },
          { target: 'failed', actions: assign({ older: ({ event }) => event.output }) },
        ],
      },
    },
    summarizingNewerBand: {
      description: 'Detail summary of the newer band through the capacity-retry ladder.',
      invoke: {
        id: 'capacityRetry',
        src: 'capacityRetry',
        input: ({ context }) => ({
          turnId: context.turnId,
          historyRef: context.historyRef,
          band: 'newer' as const,
          budget: context.budget,
          maxOverflowRetries: context.maxOverflowRetries,
          retryBackoffMs: context.retryBackoffMs,
        }),
        onDone: [
          {
            guard: { type: 'isBandSummarized', params: ({ event }) => ({ outcome: event.output }) },
            target: 'done',
            actions: assign({ newer: ({ event }) => event.output }),
          },
          { target: 'failed', actions: assign({ newer: ({ event }) => event.output }) },
        ],
      },
    },
    done: { type: 'final', description: 'Both band summaries are ready.' },
    failed: { type: 'final', description: 'Preparation or one band failed; history stays untouched.' },
  },
  output: ({ context }) => combine(context),
});
