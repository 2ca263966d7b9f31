import type { PolicyRun } from './retention-runs.js';
import { recallOf } from './retention-runs.js';
import type { BenchSection } from './types.js';

const pct = (part: number, whole: number) => (whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)}%`);

/**
 * Recoverable recall: per window and policy, the needed results the request held verbatim or
 * named by a recall id that resolves from the session, beside the recall as measured before
 * (verbatim, or a fact the summary still carries), and the recall calls it would take to get
 * the rest back (one per needed result that was only named).
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
        `${(100 * recallOf(t)).toFixed(1)}%`,
        t.recoverable - t.present,
        t.turns === 0 ? '—' : ((10 * (t.recoverable - t.present)) / t.turns).toFixed(2),
      ]);
    }
  return {
    title: 'Recoverable recall: needed results in the request or one recall away',
    headers: [
      'window',
      'policy',
      'needed',
      'recoverable recall',
      'recall before',
      'recall calls',
      'per 10 turns',
    ],
    rows,
    notes: [
      'A needed result counts as recoverable when the request holds it verbatim, or shows its recall id (a clearing stub or the note of a cut result names it) and that id resolves to it from the recorded session.',
      '"recall before" is the recall of the earlier report: verbatim, or compacted with a fact the summary still carries. "recall calls" is what getting the rest back would cost: one recall call per needed result that was only named (an upper bound; one call may serve several turns).',
      'Results that a compaction summarized away are not counted as recoverable: summaries do not name recall ids yet.',
    ],
  };
}
