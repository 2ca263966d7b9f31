import { assign, setup } from 'xstate';
import {
  failureInputTokensOf,
  failureKindOf,
  nonCapacityReasonOf,
  toFailure,
  type FailureReason,
} from '../shared/failure.js';
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

/** L5: halve a known budget; with an unknown window derive it from the failing attempt. */
export function nextRetryBudget(budget: number | null, rejectedInputTokens: number): number {
  const base = budget ?? rejectedInputTokens;
  return Math.max(Math.floor(base / 2), MIN_RETRY_BUDGET);
}

const EXHAUSTED: ReadonlySet<FailureReason> = new Set(['capacity-exhausted', 'cannot-shrink']);

/**
 * The capacity-retry ladder shared by flat and hierarchical summaries (SPEC L5, L6): prepare
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
  guards: {
    cannotShrinkInput: ({ context }, params: { inputTokens: number }) =>
      context.rejectedInputTokens !== null && params.inputTokens >= context.rejectedInputTokens,
    isEmptySummary: (_, params: { empty: boolean }) => params.empty,
    isCapacityRejection: (_, params: { error: unknown }) => failureKindOf(params.error) === 'capacity',
    retryableCapacityRejection: ({ context }, params: { error: unknown }) =>
      failureKindOf(params.error) === 'capacity' && context.attempt < context.maxRetries,
  },
  delays: {
    retryBackoff: ({ context }) => context.retryBackoffMs,
  },
}).createMachine({
  id: 'capacityRetry',
  description:
    'L5 capacity-retry ladder: halve the budget on a capacity rejection, bounded by maxOverflowRetries.',
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
    inputTokens: null,
    rejectedInputTokens: null,
    summary: null,
    failure: null,
  }),
  states: {
    preparing: {
      description: 'Bounds the fork to the current budget; an impossible budget fails before any call (L3).',
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
            guard: {
              type: 'cannotShrinkInput',
              params: ({ event }) => ({ inputTokens: event.output.inputTokens }),
            },
            target: 'exhausted',
            description: 'The halved budget does not make the fork smaller: skip the retry (L5).',
            actions: assign({
              failure: ({ context, event }) => ({
                reason: 'cannot-shrink' as const,
                message: `a retry cannot shrink the summary input (${event.output.inputTokens} >= ${context.rejectedInputTokens} tokens)`,
                inputTokens: event.output.inputTokens,
                budget: context.budget,
              }),
            }),
          },
          {
            target: 'requesting',
            actions: assign({ inputTokens: ({ event }) => event.output.inputTokens }),
          },
        ],
        onError: {
          target: 'failed',
          actions: assign({
            failure: ({ context, event }) => toFailure('budget', event.error, { budget: context.budget }),
          }),
        },
      },
    },
    requesting: {
      description: 'One provider summary call for the prepared fork.',
      invoke: {
        id: 'requestSummary',
        src: 'requestSummary',
        input: ({ context }) => ({
          turnId: context.turnId,
          historyRef: context.historyRef,
          band: context.band,
          attempt: context.attempt,
          budget: context.budget,
        }),
        onDone: [
          {
            guard: { type: 'isEmptySummary', params: ({ event }) => ({ empty: event.output.empty }) },
            target: 'failed',
            description: 'L6: an empty summary fails at once and is not retried.',
            actions: assign({
              calls: ({ context }) => context.calls + 1,
              failure: ({ context, event }) => ({
                reason: 'empty-summary' as const,
                message: 'provider returned an empty summary',
                inputTokens: event.output.inputTokens,
                budget: context.budget,
              }),
            }),
          },
          {
            target: 'done',
            actions: assign({
              calls: ({ context }) => context.calls + 1,
              summary: ({ event }) => event.output,
              inputTokens: ({ event }) => event.output.inputTokens,
            }),
          },
        ],
        onError: [
          {
            guard: {
              type: 'retryableCapacityRejection',
              params: ({ event }) => ({ error: event.error }),
            },
            target: 'backingOff',
            description: 'Capacity rejection with retries left: halve the budget (L5).',
            actions: assign(({ context, event }) => {
              const rejected = failureInputTokensOf(event.error) ?? context.inputTokens ?? 0;
              return {
                calls: context.calls + 1,
                attempt: context.attempt + 1,
                rejectedInputTokens: rejected,
                budget: nextRetryBudget(context.budget, rejected),
              };
            }),
          },
          {
            guard: { type: 'isCapacityRejection', params: ({ event }) => ({ error: event.error }) },
            target: 'exhausted',
            actions: assign({
              calls: ({ context }) => context.calls + 1,
              failure: ({ context, event }) =>
                toFailure('capacity-exhausted', event.error, {
                  inputTokens: failureInputTokensOf(event.error) ?? context.inputTokens ?? undefined,
                  budget: context.budget,
                }),
            }),
          },
          {
            target: 'failed',
            actions: assign({
              calls: ({ context }) => context.calls + 1,
              failure: ({ context, event }) =>
                toFailure(nonCapacityReasonOf(event.error), event.error, {
                  inputTokens: context.inputTokens ?? undefined,
                  budget: context.budget,
                }),
            }),
          },
        ],
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
  output: ({ context }): CapacityRetryOutput => ({
    status:
      context.failure === null ? 'done' : EXHAUSTED.has(context.failure.reason) ? 'exhausted' : 'failed',
    summaryRefs: context.summary && context.failure === null ? [context.summary.summaryRef] : [],
    summaryTokens: context.summary?.summaryTokens ?? 0,
    inputTokens: context.inputTokens ?? 0,
    truncated: context.summary?.finishReason === 'length',
    followsTemplate: context.summary?.followsTemplate ?? false,
    calls: context.calls,
    budget: context.budget,
    failure: context.failure,
  }),
});
