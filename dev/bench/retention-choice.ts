import type { PolicyRun } from './retention-runs.js';
import { dominators, isAdmissible, recallOf, strictlyBetter } from './retention-runs.js';

/** Windows where the issue asks Compactor to beat "no clearing" outright. */
export const MUST_BEAT_NO_CLEARING = [32_000, 64_000];

/** How one Compactor setting did at one window of one half. */
export interface Verdict {
  window: number;
  onFrontier: boolean;
  beatsNoClearing: boolean;
  dominatedBy: string[];
}

/** Verdict of the setting `name` at each window. */
export function verdicts(byWindow: ReadonlyMap<number, PolicyRun[]>, name: string): Verdict[] {
  const out: Verdict[] = [];
  for (const [window, runs] of byWindow) {
    const run = runs.find((r) => r.policy.name === name);
    const none = runs.find((r) => r.policy.name === 'no-clearing');
    if (!run || !none) continue;
    const dominatedBy = isAdmissible(run) ? dominators(run, runs, true) : ['(inadmissible)'];
    out.push({
      window,
      onFrontier: dominatedBy.length === 0,
      beatsNoClearing: strictlyBetter(run, none),
      dominatedBy,
    });
  }
  return out;
}

/**
 * Picks the default among the Compactor settings on the tuning half: most windows on the
 * admissible frontier plus most required wins over "no clearing" (32k, 64k); ties go to the
 * higher mean recall, then to the earlier setting (VT Code's defaults come first).
 */
export function chooseDefault(
  byWindow: ReadonlyMap<number, PolicyRun[]>,
  candidates: readonly string[],
): {
  chosen: string;
  scores: Array<{ name: string; score: number; meanRecall: number }>;
} {
  const scores = candidates.map((name) => {
    const v = verdicts(byWindow, name);
    const score =
      v.filter((x) => x.onFrontier).length +
      v.filter((x) => MUST_BEAT_NO_CLEARING.includes(x.window) && x.beatsNoClearing).length;
    const recalls = [...byWindow.values()].map((runs) => {
      const r = runs.find((x) => x.policy.name === name);
      return r ? recallOf(r.totals) : 0;
    });
    return { name, score, meanRecall: recalls.reduce((a, b) => a + b, 0) / Math.max(1, recalls.length) };
  });
  let best = scores[0];
  for (const s of scores)
    if (s.score > best.score || (s.score === best.score && s.meanRecall > best.meanRecall + 1e-12)) best = s;
  return { chosen: best.name, scores };
}
