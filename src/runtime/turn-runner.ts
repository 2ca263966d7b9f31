import { createActor, type AnyActorRef, type InspectionEvent, type Observer, type Snapshot } from 'xstate';
import {
  type CompactionMode,
  type CompactionOutput,
  type CompactionStrategy,
  type Failure,
  type LoopGuardPolicy,
  type LoopGuardReason,
  type LoopGuardState,
  type PreflightAdvisory,
  type TurnDecision,
  type TurnInput,
  type TurnOutput,
} from '../../machines/index.js';
import type { Message } from '../messages/message.js';
import { UserError } from '../core/errors.js';
import { effectiveLimits } from '../projection/effective-limits.js';
import { loadCheckpoint, saveCheckpoint, type Checkpoint } from './checkpoint.js';
import { validatePersistedSnapshot } from './validate-snapshot.js';
import { provideCompaction, type CompactionDeps } from './compaction-actors.js';
import { MessageStore } from './message-store.js';
import { DEFAULT_PROJECTION, provideTurn, type TurnActorDeps } from './turn-actors.js';
import { failGuardedOverWindow } from './request-over-window.js';

/** Source of time for elapsed-ms reports (tests pass a fake). */
export interface Clock {
  now(): number;
}

/** An XState inspection observer, as `createActor(…, { inspect })` takes it. */
export type InspectOption = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** Dependencies of {@link createTurnRunner}. */
export interface TurnRunnerDeps extends TurnActorDeps {
  /** Clients and summarizer of the compaction strategies (the estimator comes from the top level). */
  compaction: Omit<CompactionDeps, 'estimator'>;
  /** S1 strategy of the route (`selectStrategy(route).kind`); default `local`. Falls back to local when its client is missing. */
  strategy?: CompactionStrategy;
  /** L4 two-band local summaries. */
  hierarchical?: boolean;
  /** L5 retries (default: `limits.routePolicy.maxOverflowRetries`, else 1). */
  maxOverflowRetries?: number;
  retryBackoffMs?: number;
  loopGuardPolicy?: Partial<LoopGuardPolicy>;
  clock?: Clock;
  /** Inspection observer for every actor of the turn (see src/runtime/inspection.ts). */
  inspect?: InspectOption;
}

/** One turn's request. */
export interface TurnRequest {
  turnId: string;
  /** Durable session history before the turn (not modified). */
  history: readonly Message[];
  /** Conversation messages to sync into it first (H1). */
  pending?: readonly Message[];
  /** Default `automatic`. */
  mode?: CompactionMode;
  /** The previous turn's `result.loopGuard` (§14). */
  loopGuard?: LoopGuardState;
}

/** Options of a run. */
export interface RunOptions {
  /** Aborting cancels the turn (`turn.cancelled`); in-flight actors get their signals aborted. */
  signal?: AbortSignal;
  /** Write a checkpoint (persisted snapshot + store) here after every step, atomically. */
  checkpointPath?: string;
}

/** A compaction pass as reported to the user (S3, S4). */
export interface CompactionReport {
  status: CompactionOutput['status'];
  mode: CompactionMode;
  requestedStrategy: CompactionStrategy;
  strategy: CompactionStrategy;
  fallbackReason: CompactionOutput['fallbackReason'];
  itemsBefore: number;
  itemsAfter: number;
  summaryCalls: number;
  /** The history held nothing a summary could replace, so no provider call was made. */
  nothingToCompact: boolean;
  elapsedMs: number;
  failure: Failure | null;
  /** The history after the pass: the compacted one, or the input itself when failed/unchanged. */
  history: readonly Message[];
}

/** What one turn did (H1–H6, §14). */
export interface TurnResult {
  decision: TurnDecision;
  guardReason: LoopGuardReason | null;
  strategy: CompactionStrategy | null;
  fallbackReason: CompactionOutput['fallbackReason'];
  summaryCalls: number;
  tokens: { beforeClearing: number | null; afterClearing: number | null; afterCompaction: number | null };
  /** C10: cleared and protected counts of the projection (null when cancelled before clearing). */
  clearing: TurnOutput['clearing'];
  items: { before: number; after: number };
  pressureTokens: number | null;
  thresholdTokens: number | null;
  elapsedMs: number;
  advisory: PreflightAdvisory | null;
  compaction: CompactionReport | null;
  /** Feed into the next turn's request. */
  loopGuard: LoopGuardState;
  /** Session history after the turn (the input array itself when nothing changed, H6). */
  history: readonly Message[];
  /** The next request window; null only when cancelled before it was built. */
  request: readonly Message[] | null;
}

/** Manual `/compact` (always summarizes) or another explicit pass. */
export interface CompactionRequest {
  turnId: string;
  history: readonly Message[];
  /** Default `manual`. */
  mode?: CompactionMode;
}

/** The runner: machines interpreted with real actors. */
export interface TurnRunner {
  runTurn(request: TurnRequest, options?: RunOptions): Promise<TurnResult>;
  /** Continues a turn from a checkpoint file; in-flight actors run again (finished provider calls are reused). */
  resumeTurn(
    checkpointPath: string,
    options?: Omit<RunOptions, 'checkpointPath'> & { checkpointPath?: string },
  ): Promise<TurnResult>;
  runCompaction(
    request: CompactionRequest,
    options?: Omit<RunOptions, 'checkpointPath'>,
  ): Promise<CompactionReport>;
}

/** Runs an actor to its output, checkpointing every snapshot and cancelling on abort. */
function runToOutput<T>(
  actor: AnyActorRef,
  signal: AbortSignal | undefined,
  /** Cancels the actor; a returned error rejects the run instead of waiting for the output. */
  onAbort: () => unknown,
  onSnapshot: (s: Snapshot<unknown>) => void,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = (): void => {
      const error = onAbort();
      if (error !== undefined) reject(error);
    };
    let failed = false;
    const subscription = actor.subscribe({
      next: (s: Snapshot<unknown> & { output?: unknown }) => {
        if (failed) return;
        try {
          onSnapshot(s);
        } catch (e) {
          // A failed checkpoint ends the run: stop the actor so no provider call keeps going
          // (stopping aborts the in-flight actors' signals) and nothing retries the write.
          failed = true;
          signal?.removeEventListener('abort', abort);
          queueMicrotask(() => {
            subscription.unsubscribe();
            actor.stop();
          });
          reject(e);
          return;
        }
        if (s.status === 'done') {
          signal?.removeEventListener('abort', abort);
          resolve(s.output as T);
        }
      },
      error: (e: unknown) => {
        signal?.removeEventListener('abort', abort);
        reject(e);
      },
    });
    actor.start();
    if (signal?.aborted) abort();
    else signal?.addEventListener('abort', abort, { once: true });
  });
}

/**
 * Creates a turn runner. The machines are provided once per run with actors bound to a fresh
 * {@link MessageStore}; nothing is shared between turns except what the caller passes in.
 */
export function createTurnRunner(deps: TurnRunnerDeps): TurnRunner {
  const clock = deps.clock ?? { now: () => Date.now() };
  const strategy: CompactionStrategy =
    deps.strategy === 'nativeStandalone' && !deps.compaction.standalone
      ? 'local'
      : deps.strategy === 'nativeInline' && !deps.compaction.inline
        ? 'local'
        : (deps.strategy ?? 'local');
  const maxOverflowRetries = deps.maxOverflowRetries ?? deps.limits.routePolicy?.maxOverflowRetries;
  const budgetsNow = () =>
    (deps.projection ?? DEFAULT_PROJECTION).resolveBudgets(effectiveLimits(deps.limits, deps.policy));
  const guardedFits = (result: TurnResult): TurnResult =>
    failGuardedOverWindow(result, budgetsNow().capacity, Math.max(0, deps.limits.reservedOutput ?? 0));

  const machinesFor = (store: MessageStore) => {
    const compaction = provideCompaction(
      { capacity: budgetsNow().capacity, ...deps.compaction, estimator: deps.estimator },
      store,
    );
    return { compaction, turn: provideTurn(deps, store, compaction) };
  };

  const report = (out: CompactionOutput, store: MessageStore): CompactionReport => ({
    status: out.status,
    mode: out.mode,
    requestedStrategy: out.requestedStrategy,
    strategy: out.strategy,
    fallbackReason: out.fallbackReason,
    itemsBefore: out.itemsBefore,
    itemsAfter: out.itemsAfter,
    summaryCalls: out.summaryCalls,
    nothingToCompact: out.nothingToCompact,
    elapsedMs: Math.max(0, clock.now() - out.startedAt),
    failure: out.failure,
    history: store.get(out.historyRef),
  });

  const turnResult = (out: TurnOutput, store: MessageStore): TurnResult => ({
    decision: out.decision,
    guardReason: out.guardReason,
    strategy: out.strategy,
    fallbackReason: out.fallbackReason,
    summaryCalls: out.summaryCalls,
    tokens: out.tokens,
    clearing: out.clearing,
    items: out.items,
    pressureTokens: out.pressureTokens,
    thresholdTokens: out.thresholdTokens,
    elapsedMs: Math.max(0, clock.now() - out.startedAt),
    advisory: out.advisory,
    compaction: out.compaction ? report(out.compaction, store) : null,
    loopGuard: out.loopGuard,
    history: store.get(out.historyRef),
    request: out.projectionRef === null ? null : store.get(out.projectionRef),
  });

  async function drive(
    store: MessageStore,
    turnId: string,
    startedAt: number,
    actor: AnyActorRef,
    options: RunOptions,
  ): Promise<TurnResult> {
    const out = await runToOutput<TurnOutput>(
      actor,
      options.signal,
      () => {
        actor.send({ type: 'turn.cancelled' });
        return undefined;
      },
      () => {
        if (options.checkpointPath)
          saveCheckpoint(options.checkpointPath, {
            version: 1,
            machine: 'turn',
            turnId,
            startedAt,
            snapshot: actor.getPersistedSnapshot() as Record<string, unknown>,
            store: store.toJSON(),
          });
      },
    );
    actor.stop();
    return turnResult(out, store);
  }

  return {
    async runTurn(request, options = {}) {
      const store = new MessageStore();
      const historyRef = store.put(`${request.turnId}:history:input`, request.history);
      const pendingRef =
        request.pending && request.pending.length > 0
          ? store.put(`${request.turnId}:pending`, request.pending)
          : null;
      const startedAt = clock.now();
      const actor = createActor(machinesFor(store).turn, {
        input: {
          turnId: request.turnId,
          historyRef,
          pendingRef,
          mode: request.mode,
          strategy,
          hierarchical: deps.hierarchical,
          maxOverflowRetries,
          retryBackoffMs: deps.retryBackoffMs,
          loopGuard: request.loopGuard,
          loopGuardPolicy: deps.loopGuardPolicy,
          startedAt,
        },
        inspect: deps.inspect,
      });
      return guardedFits(await drive(store, request.turnId, startedAt, actor, options));
    },

    async resumeTurn(checkpointPath, options = {}) {
      const checkpoint: Checkpoint = loadCheckpoint(checkpointPath);
      if (checkpoint.machine !== 'turn')
        throw new UserError(`${checkpointPath}: checkpoint of a ${checkpoint.machine} run, not a turn`);
      const store = MessageStore.fromJSON(checkpoint.store);
      const machine = machinesFor(store).turn;
      validatePersistedSnapshot(machine, checkpoint.snapshot, checkpointPath);
      const actor = createActor(machine, {
        snapshot: checkpoint.snapshot as never,
        // Ignored when a snapshot is given; the persisted context already holds the input.
        input: undefined as unknown as TurnInput,
        inspect: deps.inspect,
      });
      return guardedFits(
        await drive(store, checkpoint.turnId, checkpoint.startedAt, actor, {
          ...options,
          checkpointPath: options.checkpointPath ?? checkpointPath,
        }),
      );
    },

    async runCompaction(request, options = {}) {
      const store = new MessageStore();
      const historyRef = store.put(`${request.turnId}:history:input`, request.history);
      const budgets = budgetsNow();
      const actor = createActor(machinesFor(store).compaction, {
        input: {
          turnId: request.turnId,
          mode: request.mode ?? 'manual',
          strategy,
          historyRef,
          itemsBefore: request.history.length,
          // A model switch converts even a lone native marker for the new model, so it always runs.
          compactableItems:
            request.mode === 'modelSwitch'
              ? undefined
              : deps.compaction.summarizer?.compactable?.(request.history),
          hierarchical: deps.hierarchical,
          budget: budgets.summaryInputBudget,
          maxOverflowRetries,
          retryBackoffMs: deps.retryBackoffMs,
          startedAt: clock.now(),
        },
        inspect: deps.inspect,
      });
      const out = await runToOutput<CompactionOutput>(
        actor,
        options.signal,
        () => {
          actor.stop(); // stopping aborts the in-flight provider call's signal
          return options.signal?.reason ?? new Error('compaction cancelled');
        },
        () => undefined,
      );
      actor.stop();
      return report(out, store);
    },
  };
}
