import type { PromiseActorLogic } from 'xstate';
import type { Failure } from '../shared/failure.js';
import type {
  PrepareSummaryInputInput,
  PrepareSummaryInputOutput,
  RequestSummaryInput,
  RequestSummaryOutput,
  SummaryBand,
  SummaryOutcome,
} from '../shared/summary.types.js';

/** Default retries after a capacity rejection (the route policy's `maxOverflowRetries`). */
export const DEFAULT_MAX_OVERFLOW_RETRIES = 1;
/** Upper bound on retries whatever the route says, so the ladder stays finite and graphable. */
export const MAX_OVERFLOW_RETRIES_CAP = 4;
/** Smallest budget the ladder halves to (VT Code: `max(floor(b/2), 4)`). */
export const MIN_RETRY_BUDGET = 4;
/** Repair requests a summary missing template sections gets before it is accepted as it is. */
export const MAX_TEMPLATE_REPAIRS = 1;
/** Longest wait between rungs. */
export const MAX_RETRY_BACKOFF_MS = 60_000;

/** Input of the capacity-retry ladder. */
export interface CapacityRetryInput {
  turnId: string;
  /** Ref of the full history being compacted (the runtime re-prepares forks from it). */
  historyRef: string;
  band: SummaryBand | 'native';
  /** Summary input budget of the first attempt; null = unknown window (the first fork is sent verbatim). */
  budget: number | null;
  /** Retries after a capacity rejection; default 1, capped at {@link MAX_OVERFLOW_RETRIES_CAP}. */
  maxOverflowRetries?: number;
  /** Pause before a retry (named delay `retryBackoff`); default 0. */
  retryBackoffMs?: number;
}

/** Context: bounded counters and numbers only. */
export interface CapacityRetryContext {
  turnId: string;
  historyRef: string;
  band: SummaryBand | 'native';
  budget: number | null;
  maxRetries: number;
  retryBackoffMs: number;
  /** 0-based attempt index, never above `maxRetries`. */
  attempt: number;
  calls: number;
  /** Repair requests sent for the current summary (at most {@link MAX_TEMPLATE_REPAIRS}). */
  repairs: number;
  /** Size of the fork prepared for the current attempt. */
  inputTokens: number | null;
  /** Size of the fork the provider rejected for capacity (a retry must be strictly smaller). */
  rejectedInputTokens: number | null;
  /** The provider's capacity error (bounded), kept for the report when the retry is skipped. */
  rejection?: string | null;
  summary: RequestSummaryOutput | null;
  failure: Failure | null;
}

/** The ladder takes no external events; it reacts only to its actors and its delay. */
export type CapacityRetryEvent = { type: 'capacityRetry.noop' };

/** Output: see {@link SummaryOutcome}. */
export type CapacityRetryOutput = SummaryOutcome;

/** `prepareSummaryInput`: bound the fork; throws `{ kind: 'budget' }` when impossible. */
export type PrepareSummaryInputLogic = PromiseActorLogic<PrepareSummaryInputOutput, PrepareSummaryInputInput>;
/** `requestSummary`: one provider call; throws `{ kind: 'capacity', inputTokens }` on a capacity rejection. */
export type RequestSummaryLogic = PromiseActorLogic<RequestSummaryOutput, RequestSummaryInput>;
