import { compactionMachine, type CompactionContext, type SummaryOutcome } from '../../../machines/index.js';
import type { MachineModel } from '../../support/graph-helpers.js';

const GOOD: SummaryOutcome = {
  status: 'done',
  summaryRefs: ['t1:flat:summary:0'],
  summaryTokens: 150,
  inputTokens: 1_800,
  truncated: false,
  followsTemplate: true,
  calls: 1,
  budget: 2_000,
  failure: null,
};
const summaryOutcomes = [
  { output: GOOD },
  { output: { ...GOOD, truncated: true } },
  { output: { ...GOOD, followsTemplate: false } },
  { output: { ...GOOD, summaryTokens: 2_500 } },
  {
    output: {
      ...GOOD,
      status: 'exhausted',
      summaryRefs: [],
      calls: 2,
      failure: { reason: 'capacity-exhausted', message: 'context_length_exceeded' },
    },
  },
];

const base = {
  turnId: 't1',
  mode: 'automatic',
  historyRef: 't1:history:synced',
  itemsBefore: 20,
  budget: 2_000,
  startedAt: 0,
};

/** Model of one compaction pass (S1–S5, A4, §14). */
export const compactionModel: MachineModel = {
  machine: compactionMachine,
  actorNames: [
    'compactStandalone',
    'compactInline',
    'capacityRetry',
    'hierarchicalSummary',
    'rebuildHistory',
  ],
  samples: {
    'xstate.done.actor.compactStandalone': [
      { output: { historyRef: 't1:history:native', itemCount: 4 } },
      { output: { historyRef: 't1:history:native', itemCount: 20 } },
    ],
    'xstate.error.actor.compactStandalone': [
      { error: { kind: 'provider', message: 'HTTP 400 invalid_request_error' } },
    ],
    'xstate.done.actor.compactInline': [
      { output: { kind: 'compacted', historyRef: 't1:history:inline', itemCount: 3 } },
      { output: { kind: 'fallback', reason: 'no-compaction' } },
      { output: { kind: 'fallback', reason: 'rejected-edit' } },
      { output: { kind: 'fallback', reason: 'null-content' } },
    ],
    'xstate.error.actor.compactInline': [{ error: { kind: 'provider', message: 'HTTP 529 overloaded' } }],
    'xstate.done.actor.capacityRetry': summaryOutcomes,
    'xstate.done.actor.hierarchicalSummary': summaryOutcomes.map((s) => ({
      output: { ...s.output, summaryRefs: s.output.summaryRefs.length ? ['t1:older', 't1:newer'] : [] },
    })),
    'xstate.done.actor.rebuildHistory': [
      { output: { historyRef: 't1:history:compacted', itemCount: 6 } },
      { output: { historyRef: 't1:history:compacted', itemCount: 21 } },
    ],
    'xstate.error.actor.rebuildHistory': [{ error: new Error('rebuilt history exceeds the context') }],
  },
  project: (s) => {
    const c = s.context as CompactionContext;
    return {
      value: s.value,
      strategy: c.strategy,
      fallbackReason: c.fallbackReason,
      status: c.status,
      failure: c.failure?.reason ?? null,
      summaryCalls: c.summaryCalls,
    };
  },
  inputs: [
    { name: 'nativeStandalone', input: { ...base, strategy: 'nativeStandalone' } },
    { name: 'nativeInline', input: { ...base, strategy: 'nativeInline' } },
    { name: 'local', input: { ...base, strategy: 'local' } },
    { name: 'local hierarchical', input: { ...base, strategy: 'local', hierarchical: true, mode: 'manual' } },
  ],
};
