import {
  hierarchicalSummaryMachine,
  type HierarchicalSummaryContext,
  type SummaryOutcome,
} from '../../../machines/index.js';
import type { MachineModel } from '../../support/graph-helpers.js';

/** A band summarized by the ladder in one call. */
export const BAND_DONE: SummaryOutcome = {
  status: 'done',
  summaryRefs: ['t1:band:summary:0'],
  summaryTokens: 80,
  inputTokens: 600,
  truncated: false,
  followsTemplate: true,
  calls: 1,
  budget: 2_000,
  failure: null,
};

/** Model of the two-band summary (L4). */
export const hierarchicalSummaryModel: MachineModel = {
  machine: hierarchicalSummaryMachine,
  actorNames: ['prepareBands', 'capacityRetry'],
  samples: {
    'xstate.done.actor.prepareBands': [
      { output: { older: { inputTokens: 600 }, newer: { inputTokens: 700 } } },
    ],
    'xstate.error.actor.prepareBands': [
      {
        error: {
          kind: 'budget',
          message: 'summary budget exhausted: newer band needs 900 tokens but only 500 are available',
        },
      },
    ],
    'xstate.done.actor.capacityRetry': [
      { output: BAND_DONE },
      {
        output: {
          ...BAND_DONE,
          status: 'exhausted',
          summaryRefs: [],
          calls: 2,
          failure: { reason: 'capacity-exhausted', message: 'context_length_exceeded' },
        },
      },
    ],
  },
  project: (s) => {
    const c = s.context as HierarchicalSummaryContext;
    return {
      value: s.value,
      older: c.older?.status ?? null,
      newer: c.newer?.status ?? null,
      failure: c.failure?.reason ?? null,
    };
  },
  inputs: [{ name: 'budget 2000', input: { turnId: 't1', historyRef: 't1:h', budget: 2_000 } }],
};
