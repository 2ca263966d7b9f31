import type { CompactionMode, SummaryBand } from '../../../machines/index.js';
import type { Message } from '../../messages/message.js';
import type { SummaryResponse } from '../../providers/types.js';
import type { SummaryWarning } from '../../summary/repair.js';

/** A bounded fork ready to send; the runtime reads only `inputTokens`. */
export interface PreparedFork {
  /** Estimated tokens of the fork, instructions excluded (the retry ladder compares retries by it). */
  readonly inputTokens: number;
}

/**
 * The Local strategy's summarizer, implemented outside the runtime (src/summary) and
 * adapted to the machines' actors here. `prepare*` are pure and deterministic: after a
 * restore the runtime prepares again instead of persisting forks.
 */
export interface LocalSummarizer<F extends PreparedFork = PreparedFork> {
  /** Prune and bound the fork of `history` to `budget` (null = unknown window: verbatim). Throws `BudgetError` when impossible. */
  prepare(history: readonly Message[], budget: number | null): F;
  /** Split, prune and bound both bands; throws `BudgetError` when either is impossible. */
  prepareBands(history: readonly Message[], budget: number | null): { older: F; newer: F };
  /** Re-bound one band for a retry (same contract as {@link LocalSummarizer.prepare}). */
  prepareBand(history: readonly Message[], band: 'older' | 'newer', budget: number | null): F;
  /** One provider call; honours `signal`; throws `ContextCapacityError` on a capacity rejection. */
  request(fork: F, band: SummaryBand, signal: AbortSignal): Promise<SummaryResponse>;
  /**
   * The repair request for `previous`, a summary that missed template sections: the same fork,
   * the instructions quoting what was missing. Absent: a summarizer without a template is
   * asked the same request again.
   */
  repair?(fork: F, band: SummaryBand, previous: string, signal: AbortSignal): Promise<SummaryResponse>;
  /** Whether a summary follows the summary template. */
  followsTemplate(text: string, band: SummaryBand): boolean;
  /** Summaries of the current pass accepted without every template section (for the report). */
  warnings?(): readonly SummaryWarning[];
  /**
   * Messages a pass could replace: those before the recent context the rebuild keeps (the
   * continuity tail), system messages and earlier Compactor summaries not counted (a native
   * marker counts: another model needs it as text). 0 = nothing
   * to compact, so no provider call is worth making.
   */
  compactable?(history: readonly Message[]): number;
  /** Summaries (flat: one; hierarchical: older, newer) + retained messages + continuity tail, bounded. */
  rebuild(history: readonly Message[], summaries: readonly string[], mode: CompactionMode): Message[];
}
