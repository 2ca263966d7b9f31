import { prng } from './synthetic-session.js';

/** One policy's result on one session: dollars, needed results it recalled, and needed results. */
export interface SideScore {
  dollars: number;
  recalled: number;
  needed: number;
}

/** Two policies on the same session; null where that policy failed on it. */
export interface SessionPair {
  a: SideScore | null;
  b: SideScore | null;
}

/** An observed difference and its 95 % percentile interval. */
export interface Interval {
  observed: number;
  low: number;
  high: number;
}

/** a − b over the sessions where both ran: total dollars, and recall in percentage points. */
export interface PairedDifference {
  sessions: number;
  dollars: Interval;
  recallPoints: Interval;
}

/** The resampling: how many resamples, the PRNG seed and the interval's coverage. */
export interface BootstrapOptions {
  resamples: number;
  seed: number;
  level: number;
}

export const BOOTSTRAP: BootstrapOptions = { resamples: 2_000, seed: 16, level: 0.95 };

/**
 * Resample plans (`resamples` × `n` session indices, drawn with replacement) by session
 * count, made once and shared by every pair of policies with that many sessions: the same
 * run gives the same numbers, and every pair is judged on the same resamples.
 */
export class ResamplePlans {
  private readonly plans = new Map<number, Uint32Array>();

  constructor(readonly options: BootstrapOptions = BOOTSTRAP) {}

  indices(n: number): Uint32Array {
    let plan = this.plans.get(n);
    if (!plan) {
      const rand = prng(this.options.seed + n);
      plan = new Uint32Array(this.options.resamples * n);
      for (let i = 0; i < plan.length; i++) plan[i] = Math.floor(rand() * n);
      this.plans.set(n, plan);
    }
    return plan;
  }
}

/** Recall as a ratio of sums (1 when nothing was needed, as in the report). */
const ratio = (recalled: number, needed: number) => (needed === 0 ? 1 : recalled / needed);

/** The q-quantile of sorted values (linear between neighbours). */
function quantile(sorted: Float64Array, q: number): number {
  const at = q * (sorted.length - 1);
  const lo = Math.floor(at);
  const hi = Math.min(sorted.length - 1, lo + 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - lo);
}

function interval(observed: number, samples: Float64Array, level: number): Interval {
  samples.sort();
  const tail = (1 - level) / 2;
  return { observed, low: quantile(samples, tail), high: quantile(samples, 1 - tail) };
}

/**
 * Paired bootstrap over sessions: resamples whole sessions with replacement and recomputes
 * both policies' totals on each resample. Recall is a ratio of sums, so each resample sums
 * recalled and needed counts, never per-session percentages. Sessions where either policy
 * failed are left out.
 */
export function pairedBootstrap(pairs: readonly SessionPair[], plans: ResamplePlans): PairedDifference {
  const both = pairs.filter((p): p is { a: SideScore; b: SideScore } => p.a !== null && p.b !== null);
  const n = both.length;
  // Per-session dollar differences: a constant difference sums to the same total in any order.
  const dd = Float64Array.from(both, (p) => p.a.dollars - p.b.dollars);
  const ra = Float64Array.from(both, (p) => p.a.recalled);
  const rb = Float64Array.from(both, (p) => p.b.recalled);
  const na = Float64Array.from(both, (p) => p.a.needed);
  const nb = Float64Array.from(both, (p) => p.b.needed);
  const sum = (xs: Float64Array) => xs.reduce((s, x) => s + x, 0);
  const observedDollars = sum(dd);
  const observedRecall = 100 * (ratio(sum(ra), sum(na)) - ratio(sum(rb), sum(nb)));
  const { resamples, level } = plans.options;
  if (n === 0) {
    const none = { observed: 0, low: 0, high: 0 };
    return { sessions: 0, dollars: none, recallPoints: none };
  }
  const idx = plans.indices(n);
  const dollars = new Float64Array(resamples);
  const recall = new Float64Array(resamples);
  for (let r = 0, base = 0; r < resamples; r++, base += n) {
    let d = 0;
    let sra = 0;
    let srb = 0;
    let sna = 0;
    let snb = 0;
    for (let j = 0; j < n; j++) {
      const i = idx[base + j];
      d += dd[i];
      sra += ra[i];
      srb += rb[i];
      sna += na[i];
      snb += nb[i];
    }
    dollars[r] = d;
    recall[r] = 100 * (ratio(sra, sna) - ratio(srb, snb));
  }
  return {
    sessions: n,
    dollars: interval(observedDollars, dollars, level),
    recallPoints: interval(observedRecall, recall, level),
  };
}

/** Plain words for an interval of a − b: "better" or "worse" for a when it excludes 0, else "within noise". */
export function verdict(i: Interval, higherIsBetter: boolean): 'better' | 'worse' | 'within noise' {
  if (i.low > 0) return higherIsBetter ? 'better' : 'worse';
  if (i.high < 0) return higherIsBetter ? 'worse' : 'better';
  return 'within noise';
}

/** True when both intervals include 0: neither the recall nor the cost difference is clear of the noise. */
export function bothWithinNoise(d: PairedDifference): boolean {
  return d.dollars.low <= 0 && d.dollars.high >= 0 && d.recallPoints.low <= 0 && d.recallPoints.high >= 0;
}
