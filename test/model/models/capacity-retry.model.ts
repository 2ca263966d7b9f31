import {
  capacityRetryMachine,
  type CapacityRetryContext,
  type RequestSummaryOutput,
} from '../../../machines/index.js';
import type { MachineModel } from '../../support/graph-helpers.js';

/** A good summary reply. */
export const SUMMARY: RequestSummaryOutput = {
  summaryRef: 't1:flat:summary:0',
  summaryTokens: 120,
  inputTokens: 900,
  finishReason: 'stop',
  followsTemplate: true,
  empty: false,
};

/** Model of the capacity-retry ladder (L5, L6). */
export const capacityRetryModel: MachineModel = {
  machine: capacityRetryMachine,
  actorNames: ['prepareSummaryInput', 'requestSummary'],
  samples: {
    // 900 < 1,000 rejected tokens: the retry shrinks; 1,000 does not (skip the retry).
    'xstate.done.actor.prepareSummaryInput': [
      { output: { inputTokens: 900 } },
      { output: { inputTokens: 1_000 } },
    ],
    'xstate.error.actor.prepareSummaryInput': [
      {
        error: {
          kind: 'budget',
          message: 'summary budget exhausted: fork needs 50 tokens but only 4 are available',
        },
      },
    ],
    'xstate.done.actor.requestSummary': [
      { output: SUMMARY },
      { output: { ...SUMMARY, summaryTokens: 0, empty: true } },
    ],
    'xstate.error.actor.requestSummary': [
      { error: { kind: 'capacity', inputTokens: 1_000, message: 'context_length_exceeded' } },
      { error: { kind: 'provider', message: 'HTTP 500 from provider' } },
    ],
  },
  project: (s) => {
    const c = s.context as CapacityRetryContext;
    return {
      value: s.value,
      attempt: c.attempt,
      calls: c.calls,
      budget: c.budget,
      failure: c.failure?.reason ?? null,
    };
  },
  inputs: [
    { name: 'budget 2000', input: { turnId: 't1', historyRef: 't1:h', band: 'flat', budget: 2_000 } },
    {
      name: 'unknown window',
      input: { turnId: 't1', historyRef: 't1:h', band: 'flat', budget: null, retryBackoffMs: 250 },
    },
    {
      name: 'two retries',
      input: { turnId: 't1', historyRef: 't1:h', band: 'flat', budget: 2_000, maxOverflowRetries: 2 },
    },
  ],
  delayMs: (_delay, s) => (s.context as CapacityRetryContext).retryBackoffMs,
};
