import {
  turnMachine,
  compactionMachine,
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
import { InternalError } from '../../core/errors.js';
import { fromComputation } from '../computed-logic.js';
import { delegatedLogic } from '../delegated-logic.js';
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
const syncHistory = (b: Binding) =>
  fromComputation<SyncHistoryOutput, SyncHistoryInput>((input) => {
    const { store } = bound(b);
    const history = store.get(input.historyRef);
    const pending = input.pendingRef === null ? [] : store.get(input.pendingRef);
    if (pending.length === 0)
      return { historyRef: input.historyRef, itemCount: history.length, syncedCount: 0 };
    const ref = store.put(`${input.turnId}:history:synced`, [...history, ...pending]);
    return { historyRef: ref, itemCount: history.length + pending.length, syncedCount: pending.length };
  });

const normalizeProjection = (b: Binding) =>
  fromComputation<NormalizeProjectionOutput, NormalizeProjectionInput>((input) => {
    const { store, tp } = bound(b);
    const history = store.get(input.historyRef);
    const normalized = tp.normalize(history);
    if (normalized === history)
      return { projectionRef: input.historyRef, itemCount: history.length, changed: false };
    const ref = store.put(`${input.turnId}:projection:normalized`, normalized);
    return { projectionRef: ref, itemCount: normalized.length, changed: true };
  });

const clearToolResults = (b: Binding) =>
  fromComputation<ClearToolResultsOutput, ClearToolResultsInput>((input) => {
    const { store, tp } = bound(b);
    const projection = store.get(input.projectionRef);
    const { messages, diagnostics } = tp.project(projection, input.keepCleared);
    const ref =
      messages === projection
        ? input.projectionRef
        : store.put(`${input.turnId}:projection:cleared`, messages);
    return { projectionRef: ref, itemCount: messages.length, ...clearingCounts(diagnostics) };
  });

/** Old tool results cleared instead of a summary pass; the machine keeps it only when it gets under the threshold. */
const clearBeforeCompacting = (b: Binding) =>
  fromComputation<ClearBeforeCompactingOutput, ClearBeforeCompactingInput>((input) => {
    const { store, tp, ...deps } = bound(b);
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
const fitRequest = (b: Binding) =>
  fromComputation<FitRequestOutput, FitRequestInput>((input) => {
    const { store, tp, ...deps } = bound(b);
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
const estimatePressure = (b: Binding) =>
  fromComputation<EstimatePressureOutput, EstimatePressureInput>((input) => {
    const { store, tp, ...deps } = bound(b);
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

const rebuildProjection = (b: Binding) =>
  fromComputation<RebuildProjectionOutput, RebuildProjectionInput>((input) => {
    const { store, tp } = bound(b);
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

/** The run a pooled turn machine serves: set for the run's length, read by each actor as it starts. */
interface Binding {
  run:
    | (TurnActorDeps & { store: MessageStore; compaction: typeof compactionMachine; tp: TurnProjection })
    | undefined;
}

function bound(b: Binding): NonNullable<Binding['run']> {
  if (b.run === undefined) throw new InternalError('a turn machine actor started outside a run');
  return b.run;
}

/** A turn machine provided once, its actors reading the run bound to it. */
interface PooledTurn {
  machine: typeof turnMachine;
  binding: Binding;
}

function pooledTurn(): PooledTurn {
  const binding: Binding = { run: undefined };
  const machine = turnMachine.provide({
    actors: {
      syncHistory: syncHistory(binding),
      normalizeProjection: normalizeProjection(binding),
      clearToolResults: clearToolResults(binding),
      estimatePressure: estimatePressure(binding),
      compaction: delegatedLogic(compactionMachine, () => bound(binding).compaction),
      clearBeforeCompacting: clearBeforeCompacting(binding),
      fitRequest: fitRequest(binding),
      rebuildProjection: rebuildProjection(binding),
    },
  });
  return { machine, binding };
}

// Providing the machine costs more than a turn that changes nothing: a machine is provided once
// and kept for the next run, a few of them for the turns that run at once.
const idle: PooledTurn[] = [];
const MAX_IDLE = 64;

/** The turn machine bound to one run's store and deps, and how to hand it back once the run has ended. */
export function provideTurn(deps: TurnImplementationsDeps): {
  machine: typeof turnMachine;
  release(): void;
} {
  const pooled = idle.pop() ?? pooledTurn();
  const { store, compaction, estimator, config } = deps;
  const tp = deps.turnProjection ?? createTurnProjection(deps);
  pooled.binding.run = { store, compaction, estimator, config, tp };
  let released = false;
  return {
    machine: pooled.machine,
    release() {
      if (released) return;
      released = true;
      pooled.binding.run = undefined;
      if (idle.length < MAX_IDLE) idle.push(pooled);
    },
  };
}
