import type { PolicyRun } from './retention-runs.js';
import { recallOf } from './retention-runs.js';
import type { BenchSection } from './types.js';

const pct = (part: number, whole: number) => (whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)}%`);

/**
 * Recoverable recall: per window and policy, the needed results the request held verbatim or
 * could get back with the recall tool (their id shown, or a summarized span's id whose list
 * names them, and the session's recall returns the original), beside the recall as measured
 * before (verbatim, or a fact the summary still carries), and the recall calls it would take.
 */
export function recoverableRecallSection(all: ReadonlyMap<number, readonly PolicyRun[]>): BenchSection {
  const rows: Array<Array<string | number>> = [];
  for (const [window, runs] of all)
    for (const r of runs) {
      const t = r.totals;
      rows.push([
        `${window / 1000}k`,
        r.policy.name,
        t.needed,
        pct(t.recoverable, t.needed),
        pct(t.present, t.needed),
        `${(100 * recallOf(t)).toFixed(1)}%`,
        t.recoverable - t.present - t.viaSpan,
        t.viaSpan,
        t.recallCalls,
        t.turns === 0 ? '—' : ((10 * t.recallCalls) / t.turns).toFixed(2),
      ]);
    }
  return {
    title: 'Recoverable recall: needed results in the request or a few recall calls away',
    headers: [
      'window',
      'policy',
      'needed',
      'recoverable recall',
      'verbatim',
      'recall before',
      'by id shown',
      'via a span list',
      'recall calls',
      'per 10 turns',
    ],
    rows,
    notes: [
      "A needed result counts as recoverable when the request holds it verbatim, or when the product's own recall tool returns its original: its recall id is in the request (a clearing stub, a cut result's note, or a summary's pointer line), or a summarized span's id is, and that span's list (read page by page) names it.",
      '"recall before" is the recall of the earlier report: verbatim, or compacted with a fact the summary still carries. "recall calls" is what getting the rest back would cost: one call per id, plus one per page of a span list read first (an upper bound; one call may serve several turns).',
    ],
  };
}
