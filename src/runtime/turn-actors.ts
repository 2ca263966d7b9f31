import { fromPromise } from 'xstate';
import {
  compactionMachine,
  turnMachine,
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
} from '../../machines/index.js';
import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import {
  cacheAwareThreshold,
  completeClearingPolicy,
  effectiveLimits,
  sharedPrefixLength,
  normalizeHistory,
  projectRequest,
  resolveBudgets,
  type Budgets,
  type ClearingPolicy,
  type Limits,
  type ProjectedRequest,
  type ProjectRequestOptions,
} from '../projection/index.js';
import type { MessageStore } from './message-store.js';

/** The pure projection functions the turn uses (default: src/projection). */
export interface ProjectionFunctions {
  normalizeHistory(history: readonly Message[]): readonly Message[];
  projectRequest(history: readonly Message[], opts: ProjectRequestOptions): ProjectedRequest;
  resolveBudgets(limits: Limits): Budgets;
}

/** The real projection functions (N, B, C). */
export const DEFAULT_PROJECTION: ProjectionFunctions = { normalizeHistory, projectRequest, resolveBudgets };

/** What the turn's own actors need. */
export interface TurnActorDeps {
  estimator: Estimator;
  limits: Limits;
  policy?: Partial<ClearingPolicy>;
  projection?: ProjectionFunctions;
}

/**
 * Provides the turn machine: its projection actors over the store, and `compaction` (the
 * compaction machine already provided by {@link provideCompaction}). Arrays are stored by
 * reference and a step that changes nothing returns its input ref, so a no-op turn never
 * copies the session history (H6).
 */
export function provideTurn(deps: TurnActorDeps, store: MessageStore, compaction: typeof compactionMachine) {
  const p = deps.projection ?? DEFAULT_PROJECTION;
  const budgets = (): Budgets => p.resolveBudgets(effectiveLimits(deps.limits, deps.policy));
  const project = (history: readonly Message[]) =>
    p.projectRequest(history, { limits: deps.limits, policy: deps.policy, estimator: deps.estimator });
  const pressure = (projectedTokens: number) => projectedTokens + Math.max(0, deps.limits.prefixTokens ?? 0);
  const complete = completeClearingPolicy(deps.policy);
  const waitsForCacheBreak = complete.compactionWaitsForCacheBreak;
  const wait = { ratio: complete.compactionWaitRatio, maxTokens: complete.compactionWaitMaxTokens };
  // The previous request sent, for cache-aware compaction (is this request's prefix still cached?).
  let lastRequest: readonly Message[] | null = null;
  const threshold = (b: Budgets, request: readonly Message[], promptBudget: number | null): number | null => {
    const intact = lastRequest !== null && sharedPrefixLength(lastRequest, request) === lastRequest.length;
    lastRequest = request;
    return waitsForCacheBreak
      ? cacheAwareThreshold(b.compactionThreshold, promptBudget, intact, wait)
      : b.compactionThreshold;
  };

  return turnMachine.provide({
    actors: {
      syncHistory: fromPromise<SyncHistoryOutput, SyncHistoryInput>(async ({ input }) => {
        const history = store.get(input.historyRef);
        const pending = input.pendingRef === null ? [] : store.get(input.pendingRef);
        if (pending.length === 0)
          return { historyRef: input.historyRef, itemCount: history.length, syncedCount: 0 };
        const ref = store.put(`${input.turnId}:history:synced`, [...history, ...pending]);
        return { historyRef: ref, itemCount: history.length + pending.length, syncedCount: pending.length };
      }),
      normalizeProjection: fromPromise<NormalizeProjectionOutput, NormalizeProjectionInput>(
        async ({ input }) => {
          const history = store.get(input.historyRef);
          const normalized = p.normalizeHistory(history);
          if (normalized === history)
            return { projectionRef: input.historyRef, itemCount: history.length, changed: false };
          const ref = store.put(`${input.turnId}:projection:normalized`, normalized);
          return { projectionRef: ref, itemCount: normalized.length, changed: true };
        },
      ),
      clearToolResults: fromPromise<ClearToolResultsOutput, ClearToolResultsInput>(async ({ input }) => {
        const projection = store.get(input.projectionRef);
        const { messages, diagnostics } = project(projection);
        const ref =
          messages === projection
            ? input.projectionRef
            : store.put(`${input.turnId}:projection:cleared`, messages);
        return {
          projectionRef: ref,
          itemCount: messages.length,
          tokensBefore: diagnostics.originalTokens,
          tokensAfter: diagnostics.projectedTokens,
          clearedCount: diagnostics.clearedResults,
          protectedBatchCount: diagnostics.protectedBatches,
          protectedResultCount: diagnostics.protectedResults,
          clearedInputCount: diagnostics.clearedInputs,
        };
      }),
      estimatePressure: fromPromise<EstimatePressureOutput, EstimatePressureInput>(async ({ input }) => {
        const b = budgets();
        const request = store.get(input.projectionRef);
        const projectedTokens = deps.estimator.history(request);
        const reserved = Math.max(0, deps.limits.reservedOutput ?? 0);
        const promptBudgetTokens = b.capacity === null ? null : Math.max(b.capacity - reserved, 0);
        return {
          pressureTokens: pressure(projectedTokens),
          projectedTokens,
          thresholdTokens: threshold(b, request, promptBudgetTokens),
          promptBudgetTokens,
          summaryInputBudget: b.summaryInputBudget,
        };
      }),
      compaction,
      rebuildProjection: fromPromise<RebuildProjectionOutput, RebuildProjectionInput>(async ({ input }) => {
        const { messages, diagnostics } = project(store.get(input.historyRef));
        const ref = store.put(`${input.turnId}:projection:rebuilt`, messages);
        lastRequest = messages;
        return {
          projectionRef: ref,
          itemCount: messages.length,
          projectedTokens: diagnostics.projectedTokens,
          pressureTokens: pressure(diagnostics.projectedTokens),
        };
      }),
    },
  });
}
