import { fromPromise } from 'xstate';
import {
  turnMachine,
  type compactionMachine,
  type ClearBeforeCompactingInput,
  type ClearBeforeCompactingOutput,
  type FitRequestInput,
  type FitRequestOutput,
  type ClearToolResultsInput,
  type ClearToolResultsOutput,
  type EstimatePressureInput,
  type EstimatePressureOutput,
  type NormalizeProjectionInput,
  type NormalizeProjectionOutput,
  type RebuildProjectionInput,
  type RebuildProjectionOutput,
  type SyncHistoryInput,
  type SyncHistoryOutput,
} from '../../../machines/index.js';
import type { ProjectionDiagnostics } from '../../projection/index.js';
import type { MessageStore } from '../message-store.js';
import { printRequest } from './sent-request.js';
import {
  createTurnProjection,
  newestStepTokens,
  type TurnActorDeps,
  type TurnProjection,
} from './turn-projection.js';
import { measureFixedPart } from './window-too-small.js';

// One factory per actor of the turn machine, so each reads on its own; provideTurn only wires them.

/** The turn's first step: the pending messages appended to the history (the input ref itself when none). */
const syncHistory = (store: MessageStore) =>
  fromPromise<SyncHistoryOutput, SyncHistoryInput>(async ({ input }) => {
    const history = store.get(input.historyRef);
    const pending = input.pendingRef === null ? [] : store.get(input.pendingRef);
    if (pending.length === 0)
      return { historyRef: input.historyRef, itemCount: history.length, syncedCount: 0 };
    const ref = store.put(`${input.turnId}:history:synced`, [...history, ...pending]);
    return { historyRef: ref, itemCount: history.length + pending.length, syncedCount: pending.length };
  });

const normalizeProjection = (store: MessageStore, tp: TurnProjection) =>
  fromPromise<NormalizeProjectionOutput, NormalizeProjectionInput>(async ({ input }) => {
    const history = store.get(input.historyRef);
    const normalized = tp.normalize(history);
    if (normalized === history)
      return { projectionRef: input.historyRef, itemCount: history.length, changed: false };
    const ref = store.put(`${input.turnId}:projection:normalized`, normalized);
    return { projectionRef: ref, itemCount: normalized.length, changed: true };
  });

const clearToolResults = (store: MessageStore, tp: TurnProjection) =>
  fromPromise<ClearToolResultsOutput, ClearToolResultsInput>(async ({ input }) => {
    const projection = store.get(input.projectionRef);
    const { messages, diagnostics } = tp.project(projection, input.keepCleared);
    const ref =
      messages === projection
        ? input.projectionRef
        : store.put(`${input.turnId}:projection:cleared`, messages);
    return { projectionRef: ref, itemCount: messages.length, ...clearingCounts(diagnostics) };
  });

/** Old tool results cleared instead of a summary pass; the machine keeps it only when it gets under the threshold. */
const clearBeforeCompacting = (deps: TurnActorDeps, store: MessageStore, tp: TurnProjection) =>
  fromPromise<ClearBeforeCompactingOutput, ClearBeforeCompactingInput>(async ({ input }) => {
    const history = store.get(input.historyRef);
    const fitted = tp.fit(history, input.targetTokens, input.keepCleared, true);
    const ref = store.put(`${input.turnId}:projection:cleared-first`, fitted.messages);
    return {
      projectionRef: ref,
      itemCount: fitted.messages.length,
      tokensBefore: deps.estimator.history(history),
      tokensAfter: fitted.projectedTokens,
      clearedCount: fitted.clearedResults,
      protectedBatchCount: 0,
      pressureTokens: tp.pressure(fitted.projectedTokens),
      sent: printRequest(fitted.messages).sent,
    };
  });

/** A request over the prompt budget made to fit it, whatever the turn's outcome. */
const fitRequest = (deps: TurnActorDeps, store: MessageStore, tp: TurnProjection) =>
  fromPromise<FitRequestOutput, FitRequestInput>(async ({ input }) => {
    const history = store.get(input.historyRef);
    const fitted = tp.fit(history, input.budgetTokens, input.keepCleared);
    const ref = store.put(`${input.turnId}:projection:fitted`, fitted.messages);
    return {
      projectionRef: ref,
      itemCount: fitted.messages.length,
      tokensBefore: deps.estimator.history(history),
      projectedTokens: fitted.projectedTokens,
      pressureTokens: tp.pressure(fitted.projectedTokens),
      clearedResults: fitted.clearedResults,
      previewedResults: fitted.previewedResults,
      droppedMessages: fitted.droppedMessages,
      sent: printRequest(fitted.messages).sent,
    };
  });

/** The counts a clearing step reports in the request's diagnostics. */
function clearingCounts(d: ProjectionDiagnostics) {
  return {
    tokensBefore: d.originalTokens,
    tokensAfter: d.projectedTokens,
    clearedCount: d.clearedResults,
    protectedBatchCount: d.protectedBatches,
    protectedResultCount: d.protectedResults,
    clearedInputCount: d.clearedInputs,
  };
}

/** Facts of the request: its tokens, whether it extends the last one sent, its newest step, its fixed part. */
const estimatePressure = (deps: TurnActorDeps, store: MessageStore, tp: TurnProjection) =>
  fromPromise<EstimatePressureOutput, EstimatePressureInput>(async ({ input }) => {
    const request = store.get(input.projectionRef);
    const projectedTokens = deps.estimator.history(request);
    const { sent, prefixIntact } = printRequest(request, input.sent);
    return {
      pressureTokens: tp.pressure(projectedTokens),
      projectedTokens,
      prefixIntact,
      newestStepTokens: newestStepTokens(request, deps.estimator),
      fixedPart: measureFixedPart(request, deps.config.limits, deps.config.budgets.capacity, deps.estimator),
      sent,
    };
  });

const rebuildProjection = (store: MessageStore, tp: TurnProjection) =>
  fromPromise<RebuildProjectionOutput, RebuildProjectionInput>(async ({ input }) => {
    const { messages, diagnostics } = tp.project(store.get(input.historyRef), input.keepCleared);
    const ref = store.put(`${input.turnId}:projection:rebuilt`, messages);
    return {
      projectionRef: ref,
      itemCount: messages.length,
      projectedTokens: diagnostics.projectedTokens,
      pressureTokens: tp.pressure(diagnostics.projectedTokens),
      sent: printRequest(messages).sent,
    };
  });

/** What the turn machine's actors work with during one run. */
export interface TurnImplementationsDeps extends TurnActorDeps {
  /** The run's message store (histories and projections by ref). */
  store: MessageStore;
  /** The compaction machine, already provided for this run. */
  compaction: typeof compactionMachine;
  /** The projection functions over the settings (default: built from them). */
  turnProjection?: TurnProjection;
}

/**
 * Actor implementations for the turn machine, for `turnMachine.provide`: its projection actors
 * over the store, and `compaction`. Arrays are stored by reference and a step that changes
 * nothing returns its input ref, so a no-op turn never copies the session history.
 */
export function createTurnImplementations(deps: TurnImplementationsDeps) {
  const { store, compaction } = deps;
  const tp = deps.turnProjection ?? createTurnProjection(deps);
  return {
    actors: {
      syncHistory: syncHistory(store),
      normalizeProjection: normalizeProjection(store, tp),
      clearToolResults: clearToolResults(store, tp),
      estimatePressure: estimatePressure(deps, store, tp),
      compaction,
      clearBeforeCompacting: clearBeforeCompacting(deps, store, tp),
      fitRequest: fitRequest(deps, store, tp),
      rebuildProjection: rebuildProjection(store, tp),
    },
  };
}

/** The turn machine provided for one run. */
export const provideTurn = (deps: TurnImplementationsDeps) =>
  turnMachine.provide(createTurnImplementations(deps));
