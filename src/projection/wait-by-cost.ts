/**
 * Whether a compaction wait can pay, by expected cost (opt-in `compaction.waitByCost`:
 * on a larger corpus the retention pilot's tuning half picked the plain wait). Model, in units
 * of one cached input token (Anthropic's prices: input 10, cache write 12.5, output 50 times a
 * cache read): a session grows `g` tokens a request;
 * every request re-reads the cached history, and every compaction pass costs its summary's
 * output and rewrites the history it leaves (written to the cache, and summarized again,
 * uncached, by the next pass). Per request that costs `g × pass / L + start + L / 2` when the
 * history grows `L` tokens between passes, least at L* = √(2 × g × pass) (the economic order
 * quantity). A wait past the threshold can pay only while the history has grown less than L*
 * since the last pass; with `g` the largest growth of one request since the cache was last
 * rewritten, the wait is ruled out only where even that growth could not make it pay.
 */

/** Prices over the cache-read price, Anthropic Claude Sonnet 4 ($0.30 a million cached tokens). */
export const PRICE_OVER_CACHE_READ = Object.freeze({ input: 10, cacheWrite: 12.5, output: 50 });

/** The stretch since the prompt cache was last rewritten (by a pass or any changed prefix). */
export interface CacheCycle {
  /** Pressure of the last request sent. */
  readonly last: number;
  /** The largest growth from one request to the next since the cache was last rewritten. */
  readonly maxStep: number;
  /** Pressure right after the last pass; before the first, the caller's estimate. */
  readonly afterPass: number;
}

/** The first cycle of a session; `afterPass` estimates what a pass leaves (tail + summary). */
export function firstCacheCycle(afterPass: number): CacheCycle {
  return { last: 0, maxStep: 0, afterPass };
}

/** The cycle once a request of `pressure` tokens is sent; `intact` when it extends the previous one. */
export function nextCacheCycle(c: CacheCycle, intact: boolean, pressure: number): CacheCycle {
  return intact
    ? { ...c, last: pressure, maxStep: Math.max(c.maxStep, pressure - c.last) }
    : { ...c, last: pressure, maxStep: 0 };
}

/** The cycle a compaction pass starts: its rebuilt request has `pressure` tokens. */
export function cycleAfterPass(pressure: number): CacheCycle {
  return { last: pressure, maxStep: 0, afterPass: pressure };
}

/** L* = √(2 × growth per request × cost of a pass), in tokens. */
export function economicCycleTokens(growth: number, afterPass: number, summaryTokens: number): number {
  const p = PRICE_OVER_CACHE_READ;
  const pass = Math.max(0, afterPass) * (p.input + p.cacheWrite - 1) + Math.max(0, summaryTokens) * p.output;
  return Math.sqrt(2 * Math.max(0, growth) * pass);
}

/**
 * True when waiting past `threshold` can pay: what a pass leaves plus L* lies beyond it. (Every
 * cycle after a pass starts there; the first one starts wherever the session did.)
 */
export function waitCanPay(c: CacheCycle, threshold: number, summaryTokens: number): boolean {
  return c.afterPass + economicCycleTokens(c.maxStep, c.afterPass, summaryTokens) > threshold;
}
