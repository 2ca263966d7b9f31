import { assign, setup } from 'xstate';
import { capacityRetryMachine } from '../capacity-retry/capacity-retry.machine.js';
import { toFailure } from '../shared/failure.js';
import { finalStateOf } from '../shared/outcome.js';
import { placeholder } from '../shared/placeholder.js';
import type { SummaryBand, SummaryOutcome } from '../shared/summary.types.js';
import type {
  HierarchicalSummaryContext,
  HierarchicalSummaryEvent,
  HierarchicalSummaryInput,
  HierarchicalSummaryOutput,
  PrepareBandsInput,
  PrepareBandsOutput,
} from './hierarchical-summary.types.js';

/** The ways a two-band summary ends; each is a final state and the output's `status`. */
const OUTCOMES = ['done', 'failed', 'exhausted'] as const;

/** Params of the actions and guards that read one band's summary outcome. */
export type BandOutcome = { outcome: SummaryOutcome };

function bandInput(context: HierarchicalSummaryContext, band: Exclude<SummaryBand, 'flat'>) {
  return {
    turnId: context.turnId,
    historyRef: context.historyRef,
    band,
    budget: context.budget,
    maxOverflowRetries: context.maxOverflowRetries,
    retryBackoffMs: context.retryBackoffMs,
  };
}

function combine(
  context: HierarchicalSummaryContext,
  status: HierarchicalSummaryOutput['status'],
): HierarchicalSummaryOutput {
  const bands = [context.older, context.newer].filter((b): b is SummaryOutcome => b !== null);
  const failedBand = bands.find((b) => b.status !== 'done');
  return {
    status,
    summaryRefs: status === 'done' ? bands.flatMap((b) => b.summaryRefs) : [],
    summaryTokens: bands.reduce((n, b) => n + b.summaryTokens, 0),
    inputTokens: bands.reduce((n, b) => n + b.inputTokens, 0),
    truncated: bands.some((b) => b.truncated),
    // The older band is a one-line abstract; the template applies to the newer (detail) band.
    followsTemplate: context.newer?.followsTemplate ?? false,
    calls: bands.reduce((n, b) => n + b.calls, 0),
    repairs: bands.reduce((n, b) => n + b.repairs, 0),
    budget: (context.newer ?? context.older)?.budget ?? context.budget,
    failure: context.failure ?? failedBand?.failure ?? null,
  };
}

/**
 * Hierarchical summary: prepare and validate both bands before spending either
 * call, then summarize the older band and the newer band, each through the capacity-retry
 * ladder (the same halve-and-retry rule as a flat summary). A band that runs out of capacity
 * retries ends the whole summary as `exhausted`; any other band failure as `failed`.
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
  actions: {
    recordBudgetFailure: assign(({ context }, params: { error: unknown }) => ({
      failure: toFailure('budget', params.error, { budget: context.budget }),
    })),
    storeOlderBand: assign((_, params: BandOutcome) => ({ older: params.outcome })),
    storeNewerBand: assign((_, params: BandOutcome) => ({ newer: params.outcome })),
  },
  guards: {
    isBandSummarized: (_, params: BandOutcome) => params.outcome.status === 'done',
    isBandExhausted: (_, params: BandOutcome) => params.outcome.status === 'exhausted',
  },
}).createMachine({
  id: 'hierarchicalSummary',
  description: 'Two-band summary: both bands validated before either provider call.',
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
      description: 'Splits, prunes and bounds both bands; a budget error here costs zero calls.',
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
          actions: { type: 'recordBudgetFailure', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    summarizingOlderBand: {
      description: 'Abstract of the older band through the capacity-retry ladder.',
      invoke: {
        id: 'capacityRetry',
        src: 'capacityRetry',
        input: ({ context }) => bandInput(context, 'older'),
        onDone: [
          {
            guard: { type: 'isBandSummarized', params: ({ event }) => ({ outcome: event.output }) },
            target: 'summarizingNewerBand',
            actions: { type: 'storeOlderBand', params: ({ event }) => ({ outcome: event.output }) },
          },
          {
            guard: { type: 'isBandExhausted', params: ({ event }) => ({ outcome: event.output }) },
            target: 'exhausted',
            actions: { type: 'storeOlderBand', params: ({ event }) => ({ outcome: event.output }) },
          },
          {
            target: 'failed',
            actions: { type: 'storeOlderBand', params: ({ event }) => ({ outcome: event.output }) },
          },
        ],
      },
    },
    summarizingNewerBand: {
      description: 'Detail summary of the newer band through the capacity-retry ladder.',
      invoke: {
        id: 'capacityRetry',
        src: 'capacityRetry',
        input: ({ context }) => bandInput(context, 'newer'),
        onDone: [
          {
            guard: { type: 'isBandSummarized', params: ({ event }) => ({ outcome: event.output }) },
            target: 'done',
            actions: { type: 'storeNewerBand', params: ({ event }) => ({ outcome: event.output }) },
          },
          {
            guard: { type: 'isBandExhausted', params: ({ event }) => ({ outcome: event.output }) },
            target: 'exhausted',
            actions: { type: 'storeNewerBand', params: ({ event }) => ({ outcome: event.output }) },
          },
          {
            target: 'failed',
            actions: { type: 'storeNewerBand', params: ({ event }) => ({ outcome: event.output }) },
          },
        ],
      },
    },
    done: { type: 'final', description: 'Both band summaries are ready.' },
    exhausted: {
      type: 'final',
      description: 'A band ran out of capacity retries; history stays untouched.',
    },
    failed: {
      type: 'final',
      description: 'Preparation or one band failed otherwise; history stays untouched.',
    },
  },
  output: ({ context, event }) => combine(context, finalStateOf(event, OUTCOMES)),
});
