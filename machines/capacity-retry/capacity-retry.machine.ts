import { assign, setup } from 'xstate';
import { failureInputTokensOf, failureKindOf, nonCapacityReasonOf, toFailure } from '../shared/failure.js';
import { finalStateOf } from '../shared/outcome.js';
import { placeholder } from '../shared/placeholder.js';
import type {
  PrepareSummaryInputInput,
  PrepareSummaryInputOutput,
  RequestSummaryInput,
  RequestSummaryOutput,
} from '../shared/summary.types.js';
import {
  DEFAULT_MAX_OVERFLOW_RETRIES,
  MAX_OVERFLOW_RETRIES_CAP,
  MAX_TEMPLATE_REPAIRS,
  MAX_RETRY_BACKOFF_MS,
  MIN_RETRY_BUDGET,
  type CapacityRetryContext,
  type CapacityRetryEvent,
  type CapacityRetryInput,
  type CapacityRetryOutput,
} from './capacity-retry.types.js';

function clampInt(value: number | undefined, fallback: number, max: number): number {
  if (value === undefined || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(0, Math.floor(value)));
}

/** Halve a known budget; with an unknown window derive it from the failing attempt. */
function nextRetryBudget(budget: number | null, rejectedInputTokens: number): number {
  const base = budget ?? rejectedInputTokens;
  return Math.max(Math.floor(base / 2), MIN_RETRY_BUDGET);
}

/** What the current attempt's request is for. */
function requestInput(context: CapacityRetryContext) {
  return {
    turnId: context.turnId,
    historyRef: context.historyRef,
    band: context.band,
    attempt: context.attempt,
    budget: context.budget,
  };
}

/** The ways the ladder ends; each is a final state and the output's `status`. */
const OUTCOMES = ['done', 'failed', 'exhausted'] as const;

/** The prepared fork's size, or the error an actor threw, handed to an action or guard. */
/** Params of the actions and guards that read the prepared request's size. */
export type Prepared = { inputTokens: number };
/** Params of the actions that record what an attempt threw. */
export type Thrown = { error: unknown };

/**
 * The capacity-retry ladder shared by flat and hierarchical summaries: prepare
 * the fork for the current budget, request a summary, and on a capacity rejection retry with a
 * halved budget only while retries remain and the new fork is strictly smaller.
 */
export const capacityRetryMachine = setup({
  types: {
    context: {} as CapacityRetryContext,
    events: {} as CapacityRetryEvent,
    input: {} as CapacityRetryInput,
    output: {} as CapacityRetryOutput,
  },
  actors: {
    prepareSummaryInput: placeholder<PrepareSummaryInputOutput, PrepareSummaryInputInput>(
      'prepareSummaryInput',
    ),
    requestSummary: placeholder<RequestSummaryOutput, RequestSummaryInput>('requestSummary'),
  },
  actions: {
    storePreparedSize: assign((_, params: Prepared) => ({ inputTokens: params.inputTokens })),
    recordCannotShrink: assign(({ context }, params: Prepared) => ({
      // The provider's rejection stays in the bounded failure message, not only the token counts.
      failure: toFailure(
        'cannot-shrink',
        `a retry cannot shrink the summary input (${params.inputTokens} >= ${context.rejectedInputTokens} tokens)` +
          (context.rejection ? ` after the capacity rejection: ${context.rejection}` : ''),
        { inputTokens: params.inputTokens, budget: context.budget },
      ),
    })),
    recordBudgetFailure: assign(({ context }, params: Thrown) => ({
      failure: toFailure('budget', params.error, { budget: context.budget }),
    })),
    countCall: assign(({ context }) => ({ calls: context.calls + 1 })),
    countRepair: assign(({ context }) => ({ repairs: context.repairs + 1 })),
    storeSummary: assign((_, params: { summary: RequestSummaryOutput }) => ({
      summary: params.summary,
      inputTokens: params.summary.inputTokens,
    })),
    recordEmptySummary: assign(({ context }, params: Prepared) => ({
      failure: {
        reason: 'empty-summary' as const,
        message: 'provider returned an empty summary',
        inputTokens: params.inputTokens,
        budget: context.budget,
      },
    })),
    halveBudget: assign(({ context }, params: Thrown) => {
      const rejected = failureInputTokensOf(params.error) ?? context.inputTokens ?? 0;
      return {
        attempt: context.attempt + 1,
        rejectedInputTokens: rejected,
        rejection: toFailure('capacity-exhausted', params.error).message,
        budget: nextRetryBudget(context.budget, rejected),
      };
    }),
    recordCapacityExhausted: assign(({ context }, params: Thrown) => ({
      failure: toFailure('capacity-exhausted', params.error, {
        inputTokens: failureInputTokensOf(params.error) ?? context.inputTokens ?? undefined,
        budget: context.budget,
      }),
    })),
    recordProviderFailure: assign(({ context }, params: Thrown) => ({
      failure: toFailure(nonCapacityReasonOf(params.error), params.error, {
        inputTokens: context.inputTokens ?? undefined,
        budget: context.budget,
      }),
    })),
  },
  guards: {
    cannotShrinkInput: ({ context }, params: Prepared) =>
      context.rejectedInputTokens !== null && params.inputTokens >= context.rejectedInputTokens,
    isEmptySummary: (_, params: { summary: RequestSummaryOutput }) => params.summary.empty,
    // A complete answer that misses template sections is asked for once more, quoting what is missing.
    needsTemplateRepair: ({ context }, params: { summary: RequestSummaryOutput }) =>
      !params.summary.followsTemplate &&
      params.summary.finishReason !== 'length' &&
      context.repairs < MAX_TEMPLATE_REPAIRS,
    // A repair answer replaces the first only when it is complete and not empty.
    isUsableRepair: (_, params: { summary: RequestSummaryOutput }) =>
      !params.summary.empty && params.summary.finishReason !== 'length',
    isCapacityRejection: (_, params: Thrown) => failureKindOf(params.error) === 'capacity',
    retryableCapacityRejection: ({ context }, params: Thrown) =>
      failureKindOf(params.error) === 'capacity' && context.attempt < context.maxRetries,
  },
  delays: {
    retryBackoff: ({ context }) => context.retryBackoffMs,
  },
}).createMachine({
  id: 'capacityRetry',
  description:
    'Capacity-retry ladder: halve the budget on a capacity rejection, bounded by maxOverflowRetries.',
  initial: 'preparing',
  context: ({ input }) => ({
    turnId: input.turnId,
    historyRef: input.historyRef,
    band: input.band,
    budget: input.budget,
    maxRetries: clampInt(input.maxOverflowRetries, DEFAULT_MAX_OVERFLOW_RETRIES, MAX_OVERFLOW_RETRIES_CAP),
    retryBackoffMs: clampInt(input.retryBackoffMs, 0, MAX_RETRY_BACKOFF_MS),
    attempt: 0,
    calls: 0,
    repairs: 0,
    inputTokens: null,
    rejectedInputTokens: null,
    rejection: null,
    summary: null,
    failure: null,
  }),
  states: {
    preparing: {
      description: 'Bounds the fork to the current budget; an impossible budget fails before any call.',
      invoke: {
        id: 'prepareSummaryInput',
        src: 'prepareSummaryInput',
        input: ({ context }) => ({
          turnId: context.turnId,
          historyRef: context.historyRef,
          band: context.band,
          attempt: context.attempt,
          budget: context.budget,
        }),
        onDone: [
          {
            guard: { type: 'cannotShrinkInput', params: ({ event }) => event.output },
            target: 'exhausted',
            description: 'The halved budget does not make the fork smaller: skip the retry.',
            actions: { type: 'recordCannotShrink', params: ({ event }) => event.output },
          },
          {
            target: 'requesting',
            actions: { type: 'storePreparedSize', params: ({ event }) => event.output },
          },
        ],
        onError: {
          target: 'failed',
          description: 'The fork cannot fit the budget: fail before any provider call.',
          actions: { type: 'recordBudgetFailure', params: ({ event }) => ({ error: event.error }) },
        },
      },
    },
    requesting: {
      description: 'One provider summary call for the prepared fork.',
      invoke: {
        id: 'requestSummary',
        src: 'requestSummary',
        input: ({ context }) => requestInput(context),
        onDone: [
          {
            guard: { type: 'isEmptySummary', params: ({ event }) => ({ summary: event.output }) },
            target: 'failed',
            description: 'An empty summary fails at once and is not retried.',
            actions: [
              'countCall',
              {
                type: 'recordEmptySummary',
                params: ({ event }) => ({ inputTokens: event.output.inputTokens }),
              },
            ],
          },
          {
            guard: { type: 'needsTemplateRepair', params: ({ event }) => ({ summary: event.output }) },
            target: 'repairing',
            description: 'The summary misses template sections: one repair request.',
            actions: [
              'countCall',
              { type: 'storeSummary', params: ({ event }) => ({ summary: event.output }) },
            ],
          },
          {
            target: 'done',
            actions: [
              'countCall',
              { type: 'storeSummary', params: ({ event }) => ({ summary: event.output }) },
            ],
          },
        ],
        onError: [
          {
            guard: { type: 'retryableCapacityRejection', params: ({ event }) => ({ error: event.error }) },
            target: 'backingOff',
            description: 'Capacity rejection with retries left: halve the budget.',
            actions: ['countCall', { type: 'halveBudget', params: ({ event }) => ({ error: event.error }) }],
          },
          {
            guard: { type: 'isCapacityRejection', params: ({ event }) => ({ error: event.error }) },
            target: 'exhausted',
            description: 'Capacity rejection with no retries left: give up.',
            actions: [
              'countCall',
              { type: 'recordCapacityExhausted', params: ({ event }) => ({ error: event.error }) },
            ],
          },
          {
            target: 'failed',
            description: 'Any other provider failure is not retried.',
            actions: [
              'countCall',
              { type: 'recordProviderFailure', params: ({ event }) => ({ error: event.error }) },
            ],
          },
        ],
      },
    },
    repairing: {
      description:
        'One repair request for a summary that misses template sections; its complete answer replaces the first, otherwise the first is kept. Either is accepted.',
      invoke: {
        id: 'requestSummary',
        src: 'requestSummary',
        input: ({ context }) => ({ ...requestInput(context), repairOf: context.summary?.summaryRef }),
        onDone: [
          {
            guard: { type: 'isUsableRepair', params: ({ event }) => ({ summary: event.output }) },
            target: 'done',
            actions: [
              'countCall',
              'countRepair',
              { type: 'storeSummary', params: ({ event }) => ({ summary: event.output }) },
            ],
          },
          {
            target: 'done',
            description: 'An empty or cut-off repair answer: the first summary is kept.',
            actions: ['countCall', 'countRepair'],
          },
        ],
        onError: {
          target: 'done',
          description: 'The repair request failed: the first summary is kept.',
          actions: ['countCall', 'countRepair'],
        },
      },
    },
    backingOff: {
      description: 'Waits retryBackoff before preparing a smaller fork.',
      after: { retryBackoff: { target: 'preparing' } },
    },
    done: { type: 'final', description: 'A non-empty summary is ready.' },
    failed: { type: 'final', description: 'Budget, empty-summary or provider failure.' },
    exhausted: {
      type: 'final',
      description: 'Capacity rejections outlasted the retries, or a retry could not shrink.',
    },
  },
  output: ({ context, event }): CapacityRetryOutput => {
    const status = finalStateOf(event, OUTCOMES);
    return {
      status,
      summaryRefs: status === 'done' && context.summary ? [context.summary.summaryRef] : [],
      summaryTokens: context.summary?.summaryTokens ?? 0,
      inputTokens: context.inputTokens ?? 0,
      truncated: context.summary?.finishReason === 'length',
      followsTemplate: (context.summary?.followsTemplate ?? false) || context.repairs > 0,
      calls: context.calls,
      repairs: context.repairs,
      budget: context.budget,
      failure: context.failure,
    };
  },
});
