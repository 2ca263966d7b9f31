/**
 * Contracts shared by the summary machines (capacityRetry, hierarchicalSummary) and the
 * compaction machine. Message arrays never enter the machines: the runtime keeps them in a
 * store and the machines pass string refs, token counts and item counts.
 */
import type { Failure } from './failure.js';

/** Which fork a summary call is for: the flat summary or one of the two hierarchical bands. */
export type SummaryBand = 'flat' | 'older' | 'newer';

/** Input of `prepareSummaryInput`: bound the fork for `band` to `budget` (null = unknown: verbatim). */
export interface PrepareSummaryInputInput {
  turnId: string;
  /** Ref of the full history being compacted. */
  historyRef: string;
  /** The summary band, or `native`: the provider's compact endpoint, whose answer is the next window. */
  band: SummaryBand | 'native';
  /** 0 for the first attempt; the runtime keys idempotent work by `${turnId}:${band}:${attempt}`. */
  attempt: number;
  budget: number | null;
}

/** Output of `prepareSummaryInput`: the estimated size of the prepared fork (instructions excluded). */
export interface PrepareSummaryInputOutput {
  inputTokens: number;
}

/** Input of `requestSummary`: send the fork prepared for the same `(turnId, band, attempt)`. */
export interface RequestSummaryInput {
  turnId: string;
  historyRef: string;
  /** The summary band, or `native`: the provider's compact endpoint, whose answer is the next window. */
  band: SummaryBand | 'native';
  attempt: number;
  budget: number | null;
  /**
   * Set on a repair request: the ref of the summary that missed template sections. The request
   * asks again, quoting what was missing; absent on the first request of an attempt.
   */
  repairOf?: string;
}

/** Output of `requestSummary`. The summary text itself stays in the runtime store under `summaryRef`. */
export interface RequestSummaryOutput {
  summaryRef: string;
  summaryTokens: number;
  inputTokens: number;
  /** `length` = cut off by the output limit (such a summary is rejected). */
  finishReason: 'stop' | 'length' | 'other';
  /** Whether the summary follows the summary template (a template-less one gets a repair request). */
  followsTemplate: boolean;
  /** Trimmed text is empty (fails at once, never retried). */
  empty: boolean;
}

/** What a summary machine (flat ladder or hierarchical) reports to its parent. */
export interface SummaryOutcome {
  status: 'done' | 'failed' | 'exhausted';
  /** One ref for a flat summary, two (older, newer) for a hierarchical one; empty on failure. */
  summaryRefs: string[];
  summaryTokens: number;
  inputTokens: number;
  truncated: boolean;
  /** The summary follows the template, or was accepted after its one repair request. */
  followsTemplate: boolean;
  /** Provider summary calls actually made (zero when preparing either band fails), repairs included. */
  calls: number;
  /** Of `calls`, the repair requests sent for summaries that missed template sections. */
  repairs: number;
  /** The budget of the last attempt (halved by the capacity-retry ladder). */
  budget: number | null;
  failure: Failure | null;
}
