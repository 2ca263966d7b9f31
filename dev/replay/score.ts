import type { Estimator } from '../../src/estimate/estimator.js';
import { textOf, type Message } from '../../src/messages/message.js';
import { isSummaryMessage } from '../../src/summary/rebuild.js';
import { indexResults, isPresent, type EvidenceNeed } from './evidence.js';
import { findRecalled, recallIdOf } from '../../src/projection/index.js';

/** How one request served the results its turn needed. */
export interface NeedScore {
  /** Needed results in the request verbatim. */
  present: number;
  /**
   * Needed results in the request verbatim, or whose recall id the request shows (a clearing
   * stub or a cut result's note names it) and which the recorded session resolves.
   */
  recoverable: number;
  /** Tokens of needed results not there verbatim (what re-reading them would cost). */
  rereadTokens: number;
  /** Needed results that were compacted away: no message answers their call, and a summary is present. */
  compactedNeeded: number;
  /** Of those, the ones whose summary still carries a fact the turn used (path, identifier, code or error line). */
  summaryRecalled: number;
}

/**
 * Scores one request against its turn's needs (recall). A result that was
 * compacted counts as recalled through the summary when a summary message in the request
 * contains, verbatim, one of the specific facts the agent used from it; a re-read (no fact)
 * or a cleared stub never does.
 */
export function scoreNeeds(
  need: readonly EvidenceNeed[],
  session: readonly Message[],
  request: readonly Message[],
  est: Estimator,
): NeedScore {
  const score: NeedScore = {
    present: 0,
    recoverable: 0,
    rereadTokens: 0,
    compactedNeeded: 0,
    summaryRecalled: 0,
  };
  if (need.length === 0) return score;
  const index = indexResults(request);
  let summaries: string | null = null;
  let shown: string | null = null;
  for (const n of need) {
    const result = session[n.result];
    if (isPresent(result, index)) {
      score.present++;
      score.recoverable++;
      continue;
    }
    shown ??= request.map((m) => textOf(m.content)).join('\n');
    const id = recallIdOf(result);
    if (shown.includes(id) && findRecalled(session, id) === result) score.recoverable++;
    score.rereadTokens += est.message(result);
    if (index.has(result.toolCallId ?? '')) continue; // cleared or masked, not compacted
    summaries ??= request
      .filter(isSummaryMessage)
      .map((m) => textOf(m.content))
      .join('\n');
    if (summaries === '') continue;
    score.compactedNeeded++;
    if (n.facts.some((f) => summaries?.includes(f))) score.summaryRecalled++;
  }
  return score;
}
