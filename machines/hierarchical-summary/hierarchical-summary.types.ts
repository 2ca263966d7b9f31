import type { PromiseActorLogic } from 'xstate';
import type { Failure } from '../shared/failure.js';
import type { SummaryOutcome } from '../shared/summary.types.js';

/** Input of the two-band summary. */
export interface HierarchicalSummaryInput {
  turnId: string;
  historyRef: string;
  /** Budget of each band's first attempt; null = unknown window. */
  budget: number | null;
  maxOverflowRetries?: number;
  retryBackoffMs?: number;
}

/** Input of `prepareBands`: split, prune and bound both bands before any call. */
export interface PrepareBandsInput {
  turnId: string;
  historyRef: string;
  budget: number | null;
}

/** Output of `prepareBands`: the sizes of both validated bands. Throws `{ kind: 'budget' }` when either is impossible. */
export interface PrepareBandsOutput {
  older: { inputTokens: number };
  newer: { inputTokens: number };
}

/** Context: the two band outcomes (bounded summaries of the child ladders). */
export interface HierarchicalSummaryContext {
  turnId: string;
  historyRef: string;
  budget: number | null;
  maxOverflowRetries: number | undefined;
  retryBackoffMs: number | undefined;
  older: SummaryOutcome | null;
  newer: SummaryOutcome | null;
  failure: Failure | null;
}

/** No external events. */
export type HierarchicalSummaryEvent = { type: 'hierarchicalSummary.noop' };

/** Output: both bands as one {@link SummaryOutcome} (refs ordered older, newer). */
export type HierarchicalSummaryOutput = SummaryOutcome;

/** `prepareBands` actor logic. */
export type PrepareBandsLogic = PromiseActorLogic<PrepareBandsOutput, PrepareBandsInput>;
