import type { Estimator } from '../../src/estimate/estimator.js';
import { textOf, type Message } from '../../src/messages/message.js';
import { isSummaryMessage } from '../../src/summary/rebuild.js';
import { indexResults, isPresent, type EvidenceNeed } from './evidence.js';
import { recallIdOf } from '../../src/projection/index.js';

/** Answers a recall call the way the session does (its history, against the request sent). */
export type RecallFn = (args: unknown, request: readonly Message[]) => string;

/** How one request served the results its turn needed. */
export interface NeedScore {
  /** Needed results in the request verbatim. */
  present: number;
  /**
   * Needed results in the request verbatim, or one or more recall calls away: the request shows
   * their recall id (a clearing stub, a cut result's note or a summary's pointer line), or a span
   * id whose list names it, and the session's recall returns the original.
   */
  recoverable: number;
  /** Recall calls getting the recoverable ones back would take (one per id, one per page of a span's list). */
  recallCalls: number;
  /** Recoverable ones whose own id the request does not show: reached through a summarized span's list. */
  viaSpan: number;
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
  recall: RecallFn,
): NeedScore {
  const score: NeedScore = {
    present: 0,
    recoverable: 0,
    recallCalls: 0,
    viaSpan: 0,
    rereadTokens: 0,
    compactedNeeded: 0,
    summaryRecalled: 0,
  };
  if (need.length === 0) return score;
  const index = indexResults(request);
  let summaries: string | null = null;
  let route: RecallRoute | null = null;
  for (const n of need) {
    const result = session[n.result];
    if (isPresent(result, index)) {
      score.present++;
      score.recoverable++;
      continue;
    }
    route ??= recallRoute(request, recall);
    const calls = route.callsFor(result);
    if (calls > 0) {
      score.recoverable++;
      score.recallCalls += calls;
      if (calls > 1) score.viaSpan++;
    }
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

/** How many recall calls reach a result from what a request shows (0: none does). */
interface RecallRoute {
  callsFor(result: Message): number;
}

const SPAN_ID = /\bs-[0-9a-f]{8}\b/g;
const PAGE = /results (\d+)-(\d+) of (\d+)/;
/** Pages of a span's list the bench reads at most (a model gives range for the next one). */
const MAX_PAGES = 20;

/**
 * The routes a request offers: recall ids it shows (one call), and span ids it shows whose
 * list, read page by page as a model would, names the id (one call per page, then one). The
 * id counts only when the session's recall returns the original text.
 */
function recallRoute(request: readonly Message[], recall: RecallFn): RecallRoute {
  const shown = request.map((m) => textOf(m.content)).join('\n');
  // Where each recall id first appears in a span's list: pages read to get there.
  let viaSpan: Map<string, number> | null = null;
  const spanPages = () => {
    if (viaSpan) return viaSpan;
    viaSpan = new Map();
    for (const span of new Set(shown.match(SPAN_ID) ?? [])) {
      let start = 1;
      for (let page = 1; page <= MAX_PAGES; page++) {
        const text = recall(
          { id: span, ...(page > 1 ? { range: { start, end: start + 59 } } : {}) },
          request,
        );
        for (const id of text.match(/\br-[0-9a-f]{8}\b/g) ?? [])
          if (!viaSpan.has(id) || viaSpan.get(id)! > page) viaSpan.set(id, page);
        const more = PAGE.exec(text.split('\n')[0]);
        if (!more || Number(more[2]) >= Number(more[3])) break;
        start = Number(more[2]) + 1;
      }
    }
    return viaSpan;
  };
  return {
    callsFor(result) {
      const id = recallIdOf(result);
      const resolves = () => recall({ id }, []) === textOf(result.content);
      if (shown.includes(id)) return resolves() ? 1 : 0;
      const pages = spanPages().get(id);
      return pages !== undefined && resolves() ? pages + 1 : 0;
    },
  };
}
