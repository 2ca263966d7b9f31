import { finalStateOf } from '../shared/outcome.js';
import { turnOutput } from './turn-output.js';
import { turnSetup } from './turn.setup.js';
import { DEFAULT_LOOP_GUARD_POLICY, INITIAL_LOOP_GUARD_STATE, type TurnDecision } from './turn.types.js';

/** Final states of a turn and the decision each reports. */
const DECISIONS = {
  belowThreshold: 'below-threshold',
  guarded: 'guarded',
  compacted: 'compacted',
  unchanged: 'unchanged',
  failed: 'failed',
  cancelled: 'cancelled',
} as const satisfies Record<string, TurnDecision>;
const FINAL_STATES = Object.keys(DECISIONS) as Array<keyof typeof DECISIONS>;

/**
 * One headless turn (SPEC H1–H6, §14): sync pending messages into the live history,
 * normalize and clear the projection, estimate pressure, then either stop below the
 * threshold (no summary call), let the loop guard skip the pass, or compact the FULL history
 * and rebuild the projection. Each outcome is a final state; failed or unchanged passes keep
 * the existing projection, and every outcome but a cancel reports the advisory preflight (H4).
 * `turn.cancelled` stops any working state and aborts its actor.
 */
export const turnMachine = turnSetup.createMachine({
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
    fitted: null,
    guardReason: null,
    loopGuard: { ...INITIAL_LOOP_GUARD_STATE, ...input.loopGuard },
    loopGuardPolicy: { ...DEFAULT_LOOP_GUARD_POLICY, ...input.loopGuardPolicy },
  }),
  states: {
    working: {
      description: 'The turn pipeline; turn.cancelled leaves it from any step.',
      initial: 'syncing',
      on: { 'turn.cancelled': { target: 'cancelled' } },
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
              actions: { type: 'storeSyncedHistory', params: ({ event }) => event.output },
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
              actions: { type: 'storeNormalizedProjection', params: ({ event }) => event.output },
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
              actions: { type: 'storeClearedProjection', params: ({ event }) => event.output },
            },
          },
        },
        estimating: {
          description: 'Pressure = projected history + prompt overhead, against the H5 threshold.',
          invoke: {
            id: 'estimatePressure',
            src: 'estimatePressure',
            input: ({ context }) => ({ turnId: context.turnId, projectionRef: context.projectionRef ?? '' }),
            onDone: {
              target: 'deciding',
              actions: { type: 'storePressure', params: ({ event }) => event.output },
            },
          },
        },
        deciding: {
          description:
            'Below the threshold no summary call is made (H2); in automatic mode the loop guard may skip the pass (§14).',
          always: [
            { guard: 'isBelowThreshold', target: '#turn.belowThreshold' },
            {
              guard: { type: 'isLoopGuardTripped', params: { reason: 'repeated-failures' } },
              target: 'guarding',
              actions: { type: 'assignGuardReason', params: { reason: 'repeated-failures' } },
            },
            {
              guard: { type: 'isLoopGuardTripped', params: { reason: 'ineffective-pass' } },
              target: 'guarding',
              actions: { type: 'assignGuardReason', params: { reason: 'ineffective-pass' } },
            },
            {
              guard: { type: 'isLoopGuardTripped', params: { reason: 'refilled-quickly' } },
              target: 'guarding',
              actions: { type: 'assignGuardReason', params: { reason: 'refilled-quickly' } },
            },
            { target: 'compacting' },
          ],
        },
        guarding: {
          description:
            "The loop guard skipped compaction (§14); a request over the prompt budget first gets old tool results cleared by VT Code's rules (C1–C7).",
          always: [{ guard: 'isOverPromptBudget', target: 'clearingToFit' }, { target: '#turn.guarded' }],
        },
        clearingToFit: {
          description:
            'Clears old tool results of the synced history to fit the window; a turn that still does not fit fails fast in the runner (§14).',
          invoke: {
            id: 'clearToFit',
            src: 'clearToFit',
            input: ({ context }) => ({ turnId: context.turnId, historyRef: context.historyRef }),
            onDone: {
              target: '#turn.guarded',
              actions: { type: 'storeFittedProjection', params: ({ event }) => event.output },
            },
            onError: {
              target: '#turn.guarded',
              description:
                'Clearing crashed: the projection stays as it was (and the runner fails the turn if it does not fit).',
            },
          },
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
                guard: { type: 'isCompacted', params: ({ event }) => ({ report: event.output }) },
                target: 'rebuildingProjection',
                actions: { type: 'storeCompaction', params: ({ event }) => ({ report: event.output }) },
              },
              {
                guard: { type: 'isUnchanged', params: ({ event }) => ({ report: event.output }) },
                target: '#turn.unchanged',
                description: 'Nothing to gain: keep the existing projection (H3).',
                actions: { type: 'storeCompaction', params: ({ event }) => ({ report: event.output }) },
              },
              {
                target: '#turn.failed',
                description: 'The pass failed: keep the existing projection (H3, S4).',
                actions: { type: 'storeCompaction', params: ({ event }) => ({ report: event.output }) },
              },
            ],
            onError: {
              target: '#turn.failed',
              description: 'The compaction actor itself crashed: keep the existing projection.',
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
              target: '#turn.compacted',
              actions: { type: 'storeRebuiltProjection', params: ({ event }) => event.output },
            },
            onError: {
              target: '#turn.failed',
              description: 'Keep the old history and projection rather than a half-applied pass.',
              actions: { type: 'recordRebuildFailure', params: ({ event }) => ({ error: event.error }) },
            },
          },
        },
      },
    },
    belowThreshold: {
      type: 'final',
      description: 'Pressure is below the threshold: no summary call; the cleared projection is sent (H2).',
    },
    guarded: {
      type: 'final',
      description:
        'The loop guard skipped automatic compaction; the turn continues on the projection, cleared to fit when it was over the window (§14).',
    },
    compacted: {
      type: 'final',
      description: 'History compacted and the projection rebuilt from it (H3).',
    },
    unchanged: {
      type: 'final',
      description: 'The pass gained nothing; history and projection stay as they were (H3, H6).',
    },
    failed: {
      type: 'final',
      description: 'Compaction or the rebuild failed; history and projection stay as they were (H3, S4).',
    },
    cancelled: {
      type: 'final',
      description: 'Cancelled; in-flight actors were aborted through their signal.',
    },
  },
  output: ({ context, event }) => turnOutput(context, DECISIONS[finalStateOf(event, FINAL_STATES)]),
});
