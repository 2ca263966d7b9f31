import { costOf, recallOf, type PolicyRun } from './retention-runs.js';
import type { BenchSection } from './types.js';

/** Recall may be at most this many points lower than no clearing. */
export const NEVER_WORSE_RECALL_POINTS = 1;
/** Dollars may be at most this share higher than no clearing. */
export const NEVER_WORSE_COST_SHARE = 0.01;

/** One window and half: the defaults against no clearing, and whether they stay within bounds. */
export interface NeverWorseVerdict {
  window: number;
  half: string;
  recallPoints: number;
  costShare: number;
  pass: boolean;
}

/**
 * The defaults against no clearing: recall at most one point lower and dollars at most 1 %
 * higher, or the verdict fails (a compaction that does not pay for itself must not run).
 */
export function neverWorseVerdict(
  window: number,
  half: string,
  runs: readonly PolicyRun[],
  policy = 'compactor',
): NeverWorseVerdict | null {
  const none = runs.find((r) => r.policy.name === 'no-clearing');
  const ours = runs.find((r) => r.policy.name === policy);
  if (!none || !ours) return null;
  const recallPoints = 100 * (recallOf(ours.totals) - recallOf(none.totals));
  const base = costOf(none);
  const costShare = base === 0 ? 0 : costOf(ours) / base - 1;
  const pass = recallPoints >= -NEVER_WORSE_RECALL_POINTS && costShare <= NEVER_WORSE_COST_SHARE;
  return { window, half, recallPoints, costShare, pass };
}

/** The never-worse verdict per window and half, FAIL where the defaults lose. */
export function neverWorseSection(
  byHalf: ReadonlyArray<readonly [string, ReadonlyMap<number, readonly PolicyRun[]>]>,
): BenchSection {
  const rows: Array<Array<string | number>> = [];
  for (const [half, byWindow] of byHalf)
    for (const [window, runs] of byWindow) {
      const v = neverWorseVerdict(window, half, runs);
      if (!v) continue;
      const none = runs.find((r) => r.policy.name === 'no-clearing');
      const ours = runs.find((r) => r.policy.name === 'compactor');
      if (!none || !ours) continue;
      rows.push([
        `${window / 1000}k`,
        half,
        `${(100 * recallOf(ours.totals)).toFixed(1)}%`,
        `${(100 * recallOf(none.totals)).toFixed(1)}%`,
        `${v.recallPoints >= 0 ? '+' : ''}${v.recallPoints.toFixed(1)}`,
        `$${costOf(ours).toFixed(2)}`,
        `$${costOf(none).toFixed(2)}`,
        `${v.costShare >= 0 ? '+' : ''}${(100 * v.costShare).toFixed(2)}%`,
        v.pass ? 'pass' : 'FAIL',
      ]);
    }
  return {
    title: 'Never worse than doing nothing: the defaults against no clearing',
    headers: [
      'window',
      'half',
      'recall',
      'no clearing',
      'points',
      '$ (Anthropic)',
      'no clearing',
      'cost',
      'verdict',
    ],
    rows,
    notes: [
      `Pass: recall at most ${NEVER_WORSE_RECALL_POINTS} point lower and dollars at most ${100 * NEVER_WORSE_COST_SHARE} % higher than no clearing, in that window and half. Sessions from outside the corpus (\`--corpus DIR\`) form their own halves the same way.`,
    ],
  };
}
