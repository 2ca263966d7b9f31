import { finalStateOf } from '../shared/outcome.js';
import { UNKNOWN_WINDOW_POLICY } from './cache-policy.js';
import { clearFirstTarget, fitTarget, keptCleared } from './request-fit.js';
import { turnOutput } from './turn-output.js';
import { turnSetup } from './turn.setup.js';
import { DEFAULT_LOOP_GUARD_POLICY, INITIAL_LOOP_GUARD_STATE, type TurnDecision } from './turn.types.js';

/** Final states of a turn and the decision each reports. */
const DECISIONS = {
  belowThreshold: 'below-threshold',
  cleared: 'cleared',
  guarded: 'guarded',
  compacted: 'compacted',
  unchanged: 'unchanged',
  failed: 'failed',
  cancelled: 'cancelled',
  windowTooSmall: 'window-too-small',
} as const satisfies Record<string, TurnDecision>;
const FINAL_STATES = Object.keys(DECISIONS) as Array<keyof typeof DECISIONS>;
/** The outcomes a turn can settle with (every final state but the two that never settle). */
const SETTLED = ['cleared', 'compacted', 'unchanged', 'failed', 'guarded'] as const;

/** Transitions to the final state of the outcome the turn settled with. */
function toOutcome() {
  return SETTLED.map((outcome) => ({
    guard: { type: 'isOutcome' as const, params: { outcome: DECISIONS[outcome] } },
    target: `#turn.${outcome}`,
  }));
}

/**
 * One headless turn: sync pending messages into the live history,
 * normalize and clear the projection, estimate pressure, then either stop below the
 * threshold (no summary call), let the loop guard skip the pass, or compact the FULL history
 * and rebuild the projection. Each outcome is a final state; failed or unchanged passes keep
 * the existing projection, and every outcome but a cancel reports the advisory preflight.
 * `turn.cancelled` stops any working state and aborts its actor.
 */
export const turnMachine = turnSetup.createMachine({
  id: 'turn',
  description: 'One headless turn: sync, normalize, clear, estimate, decide.',
  initial: 'working',
  context: ({ input }) => ({
    given: {
      turnId: input.turnId,
      mode: input.mode ?? 'automatic',
      strategy: input.strategy,
      nativeClients: input.nativeClients ?? { standalone: true, inline: true },
      hierarchical: input.hierarchical ?? false,
      maxOverflowRetries: input.maxOverflowRetries,
      retryBackoffMs: input.retryBackoffMs,
      startedAt: input.startedAt,
      pendingRef: input.pendingRef,
      minTurnsPerPass: input.minTurnsPerPass ?? 0,
      loopGuard: { ...INITIAL_LOOP_GUARD_STATE, ...input.loopGuard },
      loopGuardPolicy: { ...DEFAULT_LOOP_GUARD_POLICY, ...input.loopGuardPolicy },
      policy: input.policy ?? UNKNOWN_WINDOW_POLICY,
    },
    historyRef: input.historyRef,
    itemsBefore: 0,
    syncedCount: 0,
    projectionRef: null,
    projectionItems: 0,
    clearing: null,
    pressure: null,
    compaction: null,
    rebuilt: null,
    fitted: null,
    clearedFirst: null,
    guardReason: null,
    outcome: null,
    fitTried: false,
    cacheCycle: input.cacheCycle ?? null,
    lastSent: input.lastSent ?? null,
    projectionSent: null,
  }),
  states: {
    working: {
      description: 'The turn pipeline; turn.cancelled leaves it from any step.',
      initial: 'syncing',
      on: { 'turn.cancelled': { target: 'cancelled' } },
      states: {
        syncing: {
          description: 'Appends pending conversation messages to the live history.',
          invoke: {
            id: 'syncHistory',
            src: 'syncHistory',
            input: ({ context }) => ({
              turnId: context.given.turnId,
              historyRef: context.historyRef,
              pendingRef: context.given.pendingRef,
            }),
            onDone: {
              target: 'normalizing',
              actions: { type: 'storeSyncedHistory', params: ({ event }) => event.output },
            },
          },
        },
        normalizing: {
          description: 'Repairs call/result pairing on the request projection only.',
          invoke: {
            id: 'normalizeProjection',
            src: 'normalizeProjection',
            input: ({ context }) => ({ turnId: context.given.turnId, historyRef: context.historyRef }),
            onDone: {
              target: 'clearing',
              actions: { type: 'storeNormalizedProjection', params: ({ event }) => event.output },
            },
          },
        },
        clearing: {
          description: 'Local tool-result clearing with protected evidence.',
          invoke: {
            id: 'clearToolResults',
            src: 'clearToolResults',
            input: ({ context }) => ({
              turnId: context.given.turnId,
              projectionRef: context.projectionRef ?? '',
              keepCleared: keptCleared(context.lastSent, context.given.policy.clearsEachTurn),
            }),
            onDone: {
              target: 'estimating',
              actions: { type: 'storeClearedProjection', params: ({ event }) => event.output },
            },
          },
        },
        estimating: {
          description: 'Pressure = projected history + prompt overhead, against the compaction threshold.',
          invoke: {
            id: 'estimatePressure',
            src: 'estimatePressure',
            input: ({ context }) => ({
              turnId: context.given.turnId,
              projectionRef: context.projectionRef ?? '',
              sent: context.lastSent,
            }),
            onDone: {
              target: 'deciding',
              actions: { type: 'storePressure', params: ({ event }) => event.output },
            },
          },
        },
        deciding: {
          description:
            'A window smaller than the fixed part of a request ends the turn. Below the threshold no summary call is made. When a pass would buy only a few turns, old tool results are cleared first.',
          always: [
            { guard: 'isWindowTooSmall', target: '#turn.windowTooSmall' },
            { guard: 'isBelowThreshold', target: '#turn.belowThreshold' },
            { guard: 'isPassTooShortLived', target: 'clearingFirst' },
            { target: 'choosing' },
          ],
        },
        clearingFirst: {
          description:
            "Large tool results in a small window: clearing old results by VT Code's rules costs no summary call; compaction runs only when that is not enough.",
          invoke: {
            id: 'clearBeforeCompacting',
            src: 'clearBeforeCompacting',
            input: ({ context }) => ({
              turnId: context.given.turnId,
              historyRef: context.historyRef,
              targetTokens: clearFirstTarget(context.pressure?.thresholdTokens ?? null),
              keepCleared: keptCleared(context.lastSent, context.given.policy.clearsEachTurn),
            }),
            onDone: [
              {
                guard: { type: 'isClearedToFit', params: ({ event }) => ({ output: event.output }) },
                target: '#turn.cleared',
                actions: { type: 'storeClearedFirst', params: ({ event }) => event.output },
              },
              {
                guard: 'isPassUseless',
                target: 'settling',
                description:
                  'The newest step alone fills the room a pass would leave, so a summary cannot help: the cleared request is made to fit instead.',
                actions: [
                  { type: 'storeClearedFirst', params: ({ event }) => event.output },
                  { type: 'assignOutcome', params: { outcome: 'cleared' } },
                ],
              },
              { target: 'choosing' },
            ],
            onError: { target: 'choosing', description: 'Clearing crashed: compaction decides as usual.' },
          },
        },
        choosing: {
          description:
            'In automatic mode the loop guard skips passes that keep failing or make no progress; otherwise compact.',
          always: [
            {
              guard: { type: 'isLoopGuardTripped', params: { reason: 'repeated-failures' } },
              target: 'settling',
              actions: [
                { type: 'assignGuardReason', params: { reason: 'repeated-failures' } },
                { type: 'assignOutcome', params: { outcome: 'guarded' } },
              ],
            },
            {
              guard: { type: 'isLoopGuardTripped', params: { reason: 'ineffective-pass' } },
              target: 'settling',
              actions: [
                { type: 'assignGuardReason', params: { reason: 'ineffective-pass' } },
                { type: 'assignOutcome', params: { outcome: 'guarded' } },
              ],
            },
            { target: 'compacting' },
          ],
        },
        compacting: {
          description: 'Compaction of the FULL session history, not the projection.',
          invoke: {
            id: 'compaction',
            src: 'compaction',
            input: ({ context }) => ({
              turnId: context.given.turnId,
              mode: context.given.mode,
              strategy: context.given.strategy,
              nativeClients: context.given.nativeClients,
              historyRef: context.historyRef,
              itemsBefore: context.itemsBefore,
              hierarchical: context.given.hierarchical,
              budget: context.pressure?.summaryInputBudget ?? null,
              maxOverflowRetries: context.given.maxOverflowRetries,
              retryBackoffMs: context.given.retryBackoffMs,
              startedAt: context.given.startedAt,
            }),
            onDone: [
              {
                guard: { type: 'isCompacted', params: ({ event }) => ({ report: event.output }) },
                target: 'rebuildingProjection',
                actions: { type: 'storeCompaction', params: ({ event }) => ({ report: event.output }) },
              },
              {
                guard: { type: 'isUnchanged', params: ({ event }) => ({ report: event.output }) },
                target: 'settling',
                description: 'Nothing to gain: keep the existing projection.',
                actions: [
                  { type: 'storeCompaction', params: ({ event }) => ({ report: event.output }) },
                  { type: 'assignOutcome', params: { outcome: 'unchanged' } },
                ],
              },
              {
                target: 'settling',
                description: 'The pass failed: keep the existing projection.',
                actions: [
                  { type: 'storeCompaction', params: ({ event }) => ({ report: event.output }) },
                  { type: 'assignOutcome', params: { outcome: 'failed' } },
                ],
              },
            ],
            onError: {
              target: 'settling',
              description: 'The compaction actor itself crashed: keep the existing projection.',
              actions: { type: 'assignOutcome', params: { outcome: 'failed' } },
            },
          },
        },
        rebuildingProjection: {
          description: 'Projects the compacted history for the next request.',
          invoke: {
            id: 'rebuildProjection',
            src: 'rebuildProjection',
            input: ({ context }) => ({
              turnId: context.given.turnId,
              historyRef: context.compaction?.historyRef ?? context.historyRef,
              keepCleared: keptCleared(context.lastSent, context.given.policy.clearsEachTurn),
            }),
            onDone: {
              target: 'settling',
              actions: [
                { type: 'storeRebuiltProjection', params: ({ event }) => event.output },
                { type: 'assignOutcome', params: { outcome: 'compacted' } },
              ],
            },
            onError: {
              target: 'settling',
              description: 'Keep the old history and projection rather than a half-applied pass.',
              actions: [
                { type: 'recordRebuildFailure', params: ({ event }) => ({ error: event.error }) },
                { type: 'assignOutcome', params: { outcome: 'failed' } },
              ],
            },
          },
        },
        settling: {
          description:
            'Whatever the outcome, a request over the prompt budget is made to fit before it is sent; pressure never fails a turn.',
          always: [{ guard: 'isOverPromptBudget', target: 'fitting' }, ...toOutcome()],
        },
        fitting: {
          description:
            "Clears old tool results (VT Code's rules, then all but the newest call's), cuts the largest to previews, and only then leaves out the oldest exchanges after the task.",
          invoke: {
            id: 'fitRequest',
            src: 'fitRequest',
            input: ({ context }) => ({
              turnId: context.given.turnId,
              historyRef:
                context.outcome === 'compacted'
                  ? (context.compaction?.historyRef ?? context.historyRef)
                  : context.historyRef,
              budgetTokens: fitTarget(context.given.policy.promptBudgetTokens),
              keepCleared: keptCleared(context.lastSent, context.given.policy.clearsEachTurn),
            }),
            onDone: {
              target: 'settling',
              actions: { type: 'storeFittedRequest', params: ({ event }) => event.output },
            },
            onError: {
              target: 'settling',
              description:
                'Fitting crashed: the projection stays as it was (the advisory says it does not fit).',
              actions: 'markFitTried',
            },
          },
        },
      },
    },
    belowThreshold: {
      type: 'final',
      description: 'Pressure is below the threshold: no summary call; the cleared projection is sent.',
    },
    cleared: {
      type: 'final',
      description:
        'Old tool results were cleared instead of a summary pass that would buy only a few turns: no summary call.',
    },
    guarded: {
      type: 'final',
      description:
        'The loop guard skipped automatic compaction; the turn continues on the projection, made to fit when it was over the window.',
    },
    compacted: {
      type: 'final',
      description: 'History compacted and the projection rebuilt from it.',
    },
    unchanged: {
      type: 'final',
      description: 'The pass gained nothing; history and projection stay as they were.',
    },
    failed: {
      type: 'final',
      description: 'Compaction or the rebuild failed; history and projection stay as they were.',
    },
    windowTooSmall: {
      type: 'final',
      description:
        'The system prompt, tools, task and reserved output alone exceed the window: a configuration problem, reported before any request is sent.',
    },
    cancelled: {
      type: 'final',
      description: 'Cancelled; in-flight actors were aborted through their signal.',
    },
  },
  output: ({ context, event }) => turnOutput(context, DECISIONS[finalStateOf(event, FINAL_STATES)]),
});
