import type { Budgets } from '../../src/projection/budgets.js';
import { defaultSummaryOutputTokens } from '../../src/summary/request-fit.js';

/**
 * An experiment of issue 16, not the library's rule: let the compaction wait depend on what a
 * pass is expected to cost. Tried on the retention pilot's tuning half and not adopted (the
 * README's benchmark section has the numbers).
 *
 * Model, in units of one cached input token: a session grows `g` tokens a request; a cycle
 * between two passes grows `L` tokens; each request re-reads the request (the start of the
 * cycle plus what grew since, L / 2 on average) and each pass costs its summary's output and
 * rewrites the history it leaves (written to the cache, and summarized again, uncached, by the
 * next pass). Per request that is `g × pass / L + start + L / 2`, least at L* = sqrt(2 g pass)
 * (the economic order quantity). Waiting past the threshold pays only while the cycle has
 * grown less than L*.
 */

/** Anthropic Claude Sonnet 4 prices over the cache-read price ($0.30): input $3, write $3.75, output $15. */
export const PRICE_OVER_CACHE_READ = Object.freeze({ input: 10, cacheWrite: 12.5, output: 50 });

/**
 * `gate`: the usual wait where the model says some wait pays, none elsewhere; `bound`: the usual
 * wait, cut where the cycle reaches L*; `gate-before-pass`: the gate only before a session's
 * first pass, the usual wait after it.
 */
export type WaitByCost = 'gate' | 'bound' | 'gate-before-pass';

/** The cycle since the prompt cache was last rewritten. */
interface Cycle {
  /** Pressure of the request that rewrote the cache. */
  start: number;
  /** Requests since then that extended the cached prefix unchanged (this one included). */
  requests: number;
  /** Pressure right after a pass, and the summary's output: the last pass's, or an estimate before the first. */
  afterPass: number;
  summary: number;
  /** True when a pass started the cycle. */
  passed: boolean;
}

/** Tracks one replayed session's cache cycles and cuts the wait (`waited`: the cache-aware threshold). */
export function createWaitByCost(budgets: Budgets, mode: WaitByCost) {
  // Before the first pass, a pass is expected to leave the L7 tail and a summary of the L1 output size.
  const summary = defaultSummaryOutputTokens(budgets.capacity) ?? 0;
  let c: Cycle = {
    start: 0,
    requests: 0,
    afterPass: (budgets.continuityTailTokens ?? 0) + summary,
    summary,
    passed: false,
  };
  return {
    /** A request is about to be sent: `intact` when it extends the previous one unchanged. */
    request(intact: boolean, pressure: number): void {
      if (intact) c.requests++;
      else c = { ...c, start: pressure, requests: 0, passed: false };
    },
    /** A pass ran and the rebuilt request has `pressure` tokens. */
    passed(pressure: number, summaryTokens: number): void {
      c = { start: pressure, requests: 0, afterPass: pressure, summary: summaryTokens, passed: true };
    },
    threshold(threshold: number | null, waited: number | null, pressure: number): number | null {
      if (threshold === null || waited === null || waited <= threshold) return waited;
      if (mode === 'gate-before-pass' && c.passed) return waited;
      const worth = c.start + economicCycleTokens(c, pressure) - threshold;
      if (mode === 'bound') return threshold + Math.min(waited - threshold, Math.max(0, Math.floor(worth)));
      return worth > 0 ? waited : threshold;
    },
  };
}

/** L* = sqrt(2 × growth per request × cost of a pass), in tokens; 0 before the cycle grew. */
export function economicCycleTokens(c: Readonly<Cycle>, pressure: number): number {
  if (c.requests < 1) return 0;
  const p = PRICE_OVER_CACHE_READ;
  const growth = Math.max(0, pressure - c.start) / c.requests;
  const pass = c.afterPass * (p.input + p.cacheWrite - 1) + c.summary * p.output;
  return Math.sqrt(2 * growth * pass);
}
