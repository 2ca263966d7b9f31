/**
 * The turn's policy numbers as pure functions of facts: the compaction threshold while the
 * prompt cache holds, whether a wait can pay by expected cost, the cache cycle, and how many
 * turns a pass would buy. Actors measure; the turn machine calls these from its guards and
 * actions, so a resumed turn decides from the same context as an uninterrupted one.
 */

/** How far compaction waits while the cache is intact (chosen on the retention pilot's tuning half). */
export interface CompactionWait {
  /** Share of the way from the threshold to the prompt budget, in (0, 1). */
  ratio: number;
  /**
   * At most this many tokens past the threshold in a prompt budget up to
   * {@link WAIT_REFERENCE_BUDGET}, and proportionally fewer in a larger one.
   */
  maxTokens: number;
  /** The budget up to which `maxTokens` applies unscaled (default {@link WAIT_REFERENCE_BUDGET}; Infinity: never scaled). */
  referenceBudget?: number;
}

/**
 * The prompt budget of a 32k window less 8k of output. Up to it the wait's cap applies as
 * given; beyond it the cap shrinks in proportion (half at 64k, about a quarter at 128k): in a
 * large window the post-compaction history lies far below the threshold, so compaction is rare
 * and waiting puts off few passes, while every waiting turn re-reads a large request.
 */
export const WAIT_REFERENCE_BUDGET = 24_000;

/**
 * The default wait: 85 % of the way to the prompt budget, at most 7,000 tokens past the
 * threshold up to a 24,000-token budget and proportionally fewer beyond (3,000 at 64k, 1,400
 * at 128k). Small windows compact often, and each pass costs a summary call and a rewrite of
 * the whole cached prefix, so putting it off pays; in large windows a pass is rare and the
 * longer requests cost more in cache reads than the pass they put off (chosen on the pilot's
 * tuning half: a flat 12,000-token cap cost more than no clearing at 64k).
 */
export const DEFAULT_COMPACTION_WAIT: Readonly<CompactionWait> = Object.freeze({
  ratio: 0.85,
  maxTokens: 7_000,
});

/**
 * The compaction threshold of this turn when compaction waits for a cache break: while the
 * request still extends the previous one unchanged (its whole prefix is cached), compaction is
 * put off until the pressure reaches `wait.ratio` of the way from the threshold to the prompt
 * budget, but at most `wait.maxTokens` past the threshold (scaled down in a budget over
 * {@link WAIT_REFERENCE_BUDGET}); on a turn whose prefix changed
 * anyway (a clearing step, an edited message) the usual threshold applies. Without a prompt
 * budget the threshold is kept.
 */
export function cacheAwareThreshold(
  threshold: number | null,
  promptBudget: number | null,
  prefixIntact: boolean,
  wait: Readonly<CompactionWait> = DEFAULT_COMPACTION_WAIT,
): number | null {
  if (threshold === null || promptBudget === null || !prefixIntact || promptBudget <= threshold)
    return threshold;
  const ratio = wait.ratio > 0 && wait.ratio < 1 ? wait.ratio : DEFAULT_COMPACTION_WAIT.ratio;
  const cap = wait.maxTokens >= 0 ? wait.maxTokens : DEFAULT_COMPACTION_WAIT.maxTokens;
  const max = Math.floor(cap * Math.min(1, (wait.referenceBudget ?? WAIT_REFERENCE_BUDGET) / promptBudget));
  return threshold + Math.min(Math.floor((promptBudget - threshold) * ratio), max);
}

/*
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

/**
 * The numbers a turn decides by, resolved once from the session's settings before the turn
 * starts. Null budgets mean the window is unknown.
 */
export interface TurnPolicy {
  /** The compaction threshold before any wait; null = unknown capacity and no explicit threshold (never compacts). */
  thresholdTokens: number | null;
  /** Capacity less reserved output; null when the capacity is unknown. */
  promptBudgetTokens: number | null;
  /** Local summary input budget handed to compaction; null = unknown. */
  summaryInputBudget: number | null;
  /** System prompt and tool tokens every request carries. */
  prefixTokens: number;
  /** The continuity tail a pass keeps (0 when unknown). */
  continuityTailTokens: number;
  /** The summary a pass is expected to write (its default output size; 0 when unknown). */
  summaryTokens: number;
  /** Compaction waits past the threshold while the cached prefix is intact. */
  waitsForCacheBreak: boolean;
  /** … and only where the expected cost says waiting pays. */
  waitByCost: boolean;
  /** How far it waits (see {@link CompactionWait}). */
  wait: { ratio: number; maxTokens: number };
  /**
   * The session's own clearing rules decide again every turn which old results are cleared
   * (clearing on, not in steps); absent or false: what a request cleared stays cleared.
   */
  clearsEachTurn?: boolean;
}

/** A policy that never compacts and never waits (an unknown window). */
export const UNKNOWN_WINDOW_POLICY: Readonly<TurnPolicy> = Object.freeze({
  thresholdTokens: null,
  promptBudgetTokens: null,
  summaryInputBudget: null,
  prefixTokens: 0,
  continuityTailTokens: 0,
  summaryTokens: 0,
  waitsForCacheBreak: false,
  waitByCost: false,
  wait: DEFAULT_COMPACTION_WAIT,
});

/**
 * What the turn remembers of the last request sent: how many messages it had, a print of them,
 * and the call ids whose results it carried cleared. The next request's cached prefix is
 * intact when its first `count` messages print the same.
 */
export interface SentRequest {
  count: number;
  print: string;
  clearedCallIds: string[];
}

/** The cache cycle a turn starts from: the one it was given, else a session's first. */
export function cycleOrFirst(cycle: CacheCycle | null, policy: TurnPolicy): CacheCycle {
  return cycle ?? firstCacheCycle(policy.continuityTailTokens + policy.summaryTokens);
}

/** This turn's compaction threshold: the policy's, put off while the cache holds and the wait can pay. */
export function turnThreshold(policy: TurnPolicy, cycle: CacheCycle, prefixIntact: boolean): number | null {
  const threshold = policy.thresholdTokens;
  if (!policy.waitsForCacheBreak || threshold === null) return threshold;
  if (policy.waitByCost && !waitCanPay(cycle, threshold, policy.summaryTokens)) return threshold;
  return cacheAwareThreshold(threshold, policy.promptBudgetTokens, prefixIntact, policy.wait);
}

/**
 * How many turns of growth like the newest step a summary pass would buy: the room between what
 * a pass leaves (prefix, summary, continuity tail) and the threshold; null when unknown.
 */
export function turnsPerPass(
  policy: TurnPolicy,
  threshold: number | null,
  newestStepTokens: number,
): number | null {
  if (threshold === null || policy.promptBudgetTokens === null || newestStepTokens <= 0) return null;
  const left = policy.continuityTailTokens + policy.summaryTokens + policy.prefixTokens;
  // What a pass leaves already reaches the threshold: it buys no turn.
  return left >= threshold ? 0 : (threshold - left) / newestStepTokens;
}
