import { assign, setup } from 'xstate';
import { compactionMachine } from '../compaction/compaction.machine.js';
import { toFailure } from '../shared/failure.js';
import { placeholder } from '../shared/placeholder.js';
import { loopGuardReason, nextLoopGuardState } from './loop-guard.js';
import {
  DEFAULT_LOOP_GUARD_POLICY,
  INITIAL_LOOP_GUARD_STATE,
  type ClearToolResultsInput,
  type ClearToolResultsOutput,
  type EstimatePressureInput,
  type EstimatePressureOutput,
  type LoopGuardReason,
  type NormalizeProjectionInput,
  type NormalizeProjectionOutput,
  type PreflightAdvisory,
  type RebuildProjectionInput,
  type RebuildProjectionOutput,
  type SyncHistoryInput,
  type SyncHistoryOutput,
  type TurnContext,
  type TurnEvent,
  type TurnInput,
  type TurnOutput,
} from './turn.types.js';

function preflight(estimatedTokens: number, budgetTokens: number | null): PreflightAdvisory {
  if (budgetTokens === null || budgetTokens <= 0)
    return { estimatedTokens, budgetTokens, percentUsed: null, overBudget: false };
  return {
    estimatedTokens,
    budgetTokens,
    percentUsed: Math.round((estimatedTokens / budgetTokens) * 100),
    overBudget: estimatedTokens > budgetTokens,
  };
}

function currentPressure(context: TurnContext): number | null {
  return context.rebuilt?.pressureTokens ?? context.pressure?.pressureTokens ?? null;
}

function turnOutput(context: TurnContext): TurnOutput {
  const decision = context.decision ?? 'cancelled';
  const compacted = decision === 'compacted' && context.compaction !== null;
  return {
    decision,
    guardReason: context.guardReason,
    strategy: context.compaction?.strategy ?? null,
    fallbackReason: context.compaction?.fallbackReason ?? null,
    summaryCalls: context.compaction?.summaryCalls ?? 0,
    historyRef: compacted && context.compaction ? context.compaction.historyRef : context.historyRef,
    projectionRef: context.projectionRef,
    items: {
      before: context.itemsBefore,
      after: compacted && context.compaction ? context.compaction.itemsAfter : context.itemsBefore,
    },
    tokens: {
      beforeClearing: context.clearing?.tokensBefore ?? null,
      afterClearing: context.clearing?.tokensAfter ?? null,
      afterCompaction: compacted ? (context.rebuilt?.projectedTokens ?? null) : null,
    },
    pressureTokens: currentPressure(context),
    thresholdTokens: context.pressure?.thresholdTokens ?? null,
    advisory: context.advisory,
    compaction: context.compaction,
    loopGuard:
      decision === 'cancelled'
        ? context.loopGuard
        : nextLoopGuardState(
            context.loopGuard,
            decision,
            context.pressure?.pressureTokens ?? null,
            context.rebuilt?.pressureTokens ?? null,
          ),
    startedAt: context.startedAt,
  };
}

/**
 * One headless turn (SPEC H1–H6, §14): sync pending messages into the live history,
 * normalize and clear the projection, estimate pressure, then either stop below the
 * threshold (no summary call), let the loop guard skip the pass, or compact the FULL history
 * and rebuild the projection. Failed or unchanged passes keep the existing projection; the
 * preflight advisory only reports. `turn.cancelled` stops any working state and aborts its actor.
 */
export const turnMachine = setup({
  types: {
    context: {} as TurnContext,
    events: {} as TurnEvent,
    input: {} as TurnInput,
    output: {} as TurnOutput,
  },
  actors: {
    syncHistory: placeholder<SyncHistoryOutput, SyncHistoryInput>('syncHistory'),
    normalizeProjection: placeholder<NormalizeProjectionOutput, NormalizeProjectionInput>(
      'normalizeProjection',
    ),
    clearToolResults: placeholder<ClearToolResultsOutput, ClearToolResultsInput>('clearToolResults'),
    estimatePressure: placeholder<EstimatePressureOutput, EstimatePressureInput>('estimatePressure'),
    compaction: compactionMachine,
    rebuildProjection: placeholder<RebuildProjectionOutput, RebuildProjectionInput>('rebuildProjection'),
  },
  actions: {
    assignGuardReason: assign((_, params: { reason: LoopGuardReason }) => ({
      decision: 'guarded' as const,
      guardReason: params.reason,
    })),
    assignAdvisory: assign(({ context }) => ({
      advisory: preflight(currentPressure(context) ?? 0, context.pressure?.promptBudgetTokens ?? null),
    })),
  },
  guards: {
    isBelowThreshold: ({ context }) =>
      context.pressure === null ||
      context.pressure.thresholdTokens === null ||
      context.pressure.pressureTokens < context.pressure.thresholdTokens,
    isLoopGuardTripped: ({ context }, params: { reason: LoopGuardReason }) =>
      context.mode === 'automatic' &&
      loopGuardReason(context.loopGuard, context.loopGuardPolicy) === params.reason,
    isCompacted: (_, params: { status: string }) => params.status === 'compacted',
  },
}).createMachine({
  id: 'turn',
  description: 'One headless turn: sync, normalize, clear, estimate, decide (H1–H6, §14).',
  initial: 'working',
  context: ({ input }) => ({
    turnId: input.turnId,
    mode: input.mode ?? 'automatic',
    strategy: input.strategy,
    hierarchical: input.hierarchical ?? false,
    maxOverflowRetries: input.maxOverflowRetries,
    retryBackoffMs: input.retryBackoffMs,
    startedAt: input.startedAt,
    historyRef: input.historyRef,
    pendingRef: input.pendingRef,
    itemsBefore: 0,
    syncedCount: 0,
    projectionRef: null,
    projectionItems: 0,
    clearing: null,
    pressure: null,
    compaction: null,
    rebuilt: null,
    decision: null,
    guardReason: null,
    advisory: null,
    loopGuard: { ...INITIAL_LOOP_GUARD_STATE, ...input.loopGuard },
    loopGuardPolicy: { ...DEFAULT_LOOP_GUARD_POLICY, ...input.loopGuardPolicy },
  }),
  states: {
    working: {
      description: 'The turn pipeline; turn.cancelled leaves it from any step.',
      initial: 'syncing',
      on: {
        'turn.cancelled': { target: 'cancelled', actions: assign({ decision: 'cancelled' }) },
      },
      states: {
        syncing: {
          description: 'Appends pending conversation messages to the live history (H1).',
          invoke: {
            id: 'syncHistory',
            src: 'syncHistory',
            input: ({ context }) => ({
              turnId: context.turnId,
              historyRef: context.historyRef,
              pendingRef: context.pendingRef,
            }),
            onDone: {
              target: 'normalizing',
              actions: assign(({ event }) => ({
                historyRef: event.output.historyRef,
                itemsBefore: event.output.itemCount,
                syncedCount: event.output.syncedCount,
              })),
            },
          },
        },
        normalizing: {
          description: 'Repairs call/result pairing on the request projection only (N1–N5).',
          invoke: {
            id: 'normalizeProjection',
            src: 'normalizeProjection',
            input: ({ context }) => ({ turnId: context.turnId, historyRef: context.historyRef }),
            onDone: {
              target: 'clearing',
              actions: assign(({ event }) => ({
                projectionRef: event.output.projectionRef,
                projectionItems: event.output.itemCount,
              })),
            },
          },
        },
        clearing: {
          description: 'Local tool-result clearing with protected evidence (C1–C11).',
          invoke: {
            id: 'clearToolResults',
            src: 'clearToolResults',
            input: ({ context }) => ({ turnId: context.turnId, projectionRef: context.projectionRef ?? '' }),
            onDone: {
              target: 'estimating',
              actions: assign(({ event }) => ({
                projectionRef: event.output.projectionRef,
                projectionItems: event.output.itemCount,
                clearing: {
                  tokensBefore: event.output.tokensBefore,
                  tokensAfter: event.output.tokensAfter,
                  clearedCount: event.output.clearedCount,
                  protectedBatchCount: event.output.protectedBatchCount,
                },
              })),
            },
          },
        },
        estimating: {
          description: 'Pressure = projected history + prompt overhead, against the H5 threshold.',
          invoke: {
            id: 'estimatePressure',
            src: 'estimatePressure',
            input: ({ context }) => ({ turnId: context.turnId, projectionRef: context.projectionRef ?? '' }),
            onDone: { target: 'deciding', actions: assign({ pressure: ({ event }) => event.output }) },
          },
        },
        deciding: {
          description:
            'Below the threshold no summary call is made (H2); the loop guard may skip a pass (§14).',
          always: [
            {
              guard: 'isBelowThreshold',
              target: 'checkingPreflight',
              actions: assign({ decision: 'below-threshold' }),
            },
            {
              guard: { type: 'isLoopGuardTripped', params: { reason: 'repeated-failures' } },
              target: 'guarded',
              actions: { type: 'assignGuardReason', params: { reason: 'repeated-failures' } },
            },
            {
              guard: { type: 'isLoopGuardTripped', params: { reason: 'ineffective-pass' } },
              target: 'guarded',
              actions: { type: 'assignGuardReason', params: { reason: 'ineffective-pass' } },
            },
            {
              guard: { type: 'isLoopGuardTripped', params: { reason: 'refilled-quickly' } },
              target: 'guarded',
              actions: { type: 'assignGuardReason', params: { reason: 'refilled-quickly' } },
            },
            { target: 'compacting' },
          ],
        },
        guarded: {
          description:
            'Automatic compaction skipped by the loop guard; the turn continues on the projection.',
          always: { target: 'checkingPreflight' },
        },
        compacting: {
          description: 'Compaction of the FULL session history, not the projection (H3).',
          invoke: {
            id: 'compaction',
            src: 'compaction',
            input: ({ context }) => ({
              turnId: context.turnId,
              mode: context.mode,
              strategy: context.strategy,
              historyRef: context.historyRef,
              itemsBefore: context.itemsBefore,
              hierarchical: context.hierarchical,
              budget: context.pressure?.summaryInputBudget ?? null,
              maxOverflowRetries: context.maxOverflowRetries,
              retryBackoffMs: context.retryBackoffMs,
              startedAt: context.startedAt,
            }),
            onDone: [
              {
                guard: { type: 'isCompacted', params: ({ event }) => ({ status: event.output.status }) },
                target: 'rebuildingProjection',
                actions: assign({ compaction: ({ event }) => event.output }),
              },
              {
                target: 'checkingPreflight',
                description: 'Failed or unchanged: keep the existing projection (H3).',
                actions: assign({
                  compaction: ({ event }) => event.output,
                  decision: ({ event }) => (event.output.status === 'unchanged' ? 'unchanged' : 'failed'),
                }),
              },
            ],
            onError: {
              target: 'checkingPreflight',
              actions: assign({ decision: 'failed' }),
            },
          },
        },
        rebuildingProjection: {
          description: 'Projects the compacted history for the next request (H3).',
          invoke: {
            id: 'rebuildProjection',
            src: 'rebuildProjection',
            input: ({ context }) => ({
              turnId: context.turnId,
              historyRef: context.compaction?.historyRef ?? context.historyRef,
            }),
            onDone: {
              target: 'checkingPreflight',
              actions: assign(({ event }) => ({
                decision: 'compacted' as const,
                rebuilt: event.output,
                projectionRef: event.output.projectionRef,
                projectionItems: event.output.itemCount,
              })),
            },
            onError: {
              target: 'checkingPreflight',
              description: 'Keep the old history and projection rather than a half-applied pass.',
              actions: assign(({ context, event }) => ({
                decision: 'failed' as const,
                compaction: context.compaction && {
                  ...context.compaction,
                  status: 'failed' as const,
                  historyRef: context.historyRef,
                  itemsAfter: context.itemsBefore,
                  failure: toFailure('rebuild-error', event.error),
                },
              })),
            },
          },
        },
        checkingPreflight: {
          description: 'Advisory only: reports budget use, never blocks the turn (H4).',
          entry: 'assignAdvisory',
          always: { target: '#turn.ready' },
        },
      },
    },
    ready: { type: 'final', description: 'The request window is ready for the next request.' },
    cancelled: {
      type: 'final',
      description: 'Cancelled; in-flight actors were aborted through their signal.',
    },
  },
  output: ({ context }) => turnOutput(context),
});
