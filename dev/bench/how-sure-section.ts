import { PRICES, PRIMARY_PRICE } from '../replay/prices.js';
import {
  bothWithinNoise,
  pairedBootstrap,
  verdict,
  type Interval,
  type PairedDifference,
  type ResamplePlans,
  type SideScore,
} from './paired-bootstrap.js';
import { isAdmissible, type PolicyRun } from './retention-runs.js';
import type { BenchSection } from './types.js';

/** The policy the "how sure" table compares everything against: the library's defaults. */
export const DEFAULTS_POLICY = 'compactor';

function scores(run: PolicyRun): Array<SideScore | null> {
  const price = PRICES.indexOf(PRIMARY_PRICE);
  return run.perSession.map((s) =>
    s.ok
      ? {
          dollars: s.dollars[price],
          recalled: s.result.totals.present + s.result.totals.summaryRecalled,
          needed: s.result.totals.needed,
        }
      : null,
  );
}

/** a − b per session, bootstrapped: recall in points, dollars under the primary price row. */
export function compareRuns(a: PolicyRun, b: PolicyRun, plans: ResamplePlans): PairedDifference {
  const sa = scores(a);
  const sb = scores(b);
  return pairedBootstrap(
    sa.map((x, i) => ({ a: x, b: sb[i] })),
    plans,
  );
}

/**
 * `names` of policies that beat `run`, each followed by "(within noise)" when its lead on
 * recall and on cost both lie inside their intervals (the strict comparison stays).
 */
export function markWithinNoise(
  names: readonly string[],
  run: PolicyRun,
  runs: readonly PolicyRun[],
  plans: ResamplePlans,
): string[] {
  return names.map((name) => {
    const by = runs.find((x) => x.policy.name === name);
    return by && withinNoise(by, run, plans) ? `${name} (within noise)` : name;
  });
}

/** True when both the recall and the cost difference of `a` against `b` have intervals that include 0. */
export function withinNoise(a: PolicyRun, b: PolicyRun, plans: ResamplePlans): boolean {
  return bothWithinNoise(compareRuns(a, b, plans));
}

/** A signed number; what rounds to zero shows no sign. */
function signed(x: number, digits: number, prefix = ''): string {
  const text = `${prefix}${Math.abs(x).toFixed(digits)}`;
  return Number(Math.abs(x).toFixed(digits)) === 0 ? text : x > 0 ? `+${text}` : `−${text}`;
}
const points = (i: Interval) => `${signed(i.observed, 1)} pt (${signed(i.low, 1)} to ${signed(i.high, 1)})`;
const dollars = (i: Interval) =>
  `${signed(i.observed, 2, '$')} (${signed(i.low, 2, '$')} to ${signed(i.high, 2, '$')})`;

/**
 * How sure the report can be: the defaults against every other admissible policy of one window
 * and half, with 95 % intervals from a paired bootstrap over sessions and a verdict per axis.
 */
export function howSureSection(
  runs: readonly PolicyRun[],
  window: number,
  half: string,
  plans: ResamplePlans,
): BenchSection | null {
  const defaults = runs.find((r) => r.policy.name === DEFAULTS_POLICY);
  if (!defaults) return null;
  const others = runs.filter((r) => r !== defaults && isAdmissible(r));
  const { resamples, level } = plans.options;
  return {
    title: `How sure: the defaults against each other setting and policy, ${half} half, window ${window / 1000}k`,
    headers: [
      'other policy',
      'recall: defaults − other',
      'recall (defaults)',
      `cost: defaults − other (${PRIMARY_PRICE.provider})`,
      'cost (defaults)',
      'sessions',
    ],
    rows: others.map((o) => {
      const d = compareRuns(defaults, o, plans);
      return [
        o.policy.name,
        points(d.recallPoints),
        verdict(d.recallPoints, true),
        dollars(d.dollars),
        verdict(d.dollars, false),
        d.sessions,
      ];
    }),
    notes: [
      `Each difference is the defaults minus the other policy over the same sessions (recall in percentage points, dollars summed over sessions), with a ${Math.round(level * 100)} % interval in parentheses: the sessions are resampled with replacement ${resamples.toLocaleString('en-US')} times (a fixed seed, so the same run gives the same numbers), both policies' totals are recomputed on each resample, and the interval is the middle ${Math.round(level * 100)} % of the resampled differences. "better" or "worse" (for the defaults: more recall, fewer dollars) only when the interval excludes 0; otherwise "within noise" — sessions differ too much to tell.`,
      `Only admissible policies are compared; sessions where either policy failed are left out.${isAdmissible(defaults) ? '' : ' The defaults themselves are not admissible at this window.'}`,
    ],
  };
}
