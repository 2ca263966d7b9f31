import type { Estimator } from '../../src/estimate/estimator.js';
import type { Message } from '../../src/messages/message.js';
import { sharedPrefixLength } from '../../src/projection/cache-aware.js';
import type { PriceRow } from './prices.js';

/**
 * The prompt-cache cost model of the retention pilot. A provider caches the longest prefix a
 * request shares with the previous one; the rest is written to the cache (Anthropic charges
 * extra for that) or sent uncached. Replayed sessions carry no reliable timing, so the model
 * assumes the cache survives between consecutive turns (no 5-minute expiry) and that the
 * agent's requests are the only traffic on that cache.
 */

/** Input tokens of one request, split by what the cache did with them. */
export interface CacheSplit {
  /** Tokens of the longest message prefix shared with the previous request. */
  prefixTokens: number;
  /** All input tokens of the request. */
  inputTokens: number;
}

/** Tokens of the longest message prefix `request` shares with `previous` (0 for the first request). */
export function sharedPrefixTokens(
  previous: readonly Message[] | null,
  request: readonly Message[],
  est: Estimator,
): number {
  const n = sharedPrefixLength(previous, request);
  let tokens = 0;
  for (let i = 0; i < n; i++) tokens += est.message(request[i]);
  return tokens;
}

/** Dollars of one request's input under a price row. */
export function requestInputDollars(split: CacheSplit, price: PriceRow): number {
  const read = split.prefixTokens >= price.minCacheTokens ? split.prefixTokens : 0;
  const rest = split.inputTokens - read;
  // A request below the cacheable minimum is neither read from nor written to the cache.
  const restPrice = split.inputTokens >= price.minCacheTokens ? price.cacheWrite : price.input;
  return (read * price.cachedInput + rest * restPrice) / 1e6;
}

/** Everything a replayed session sent and received, for pricing. */
export interface SessionUsage {
  requests: readonly CacheSplit[];
  /** The recorded assistant messages (the agent's output; the same under every policy). */
  outputTokens: number;
  /** Summary calls: their input, output = the summary. */
  summaryInputTokens: number;
  /** Of that input, what the cache serves (a summary over the last request sent); the rest is sent uncached. */
  summaryCachedTokens?: number;
  summaryOutputTokens: number;
}

/** Dollars of a replayed session under one price row. */
export function sessionDollars(usage: SessionUsage, price: PriceRow): number {
  let d = 0;
  for (const r of usage.requests) d += requestInputDollars(r, price);
  const cached = Math.min(usage.summaryInputTokens, usage.summaryCachedTokens ?? 0);
  d += ((usage.summaryInputTokens - cached) * price.input + cached * price.cachedInput) / 1e6;
  d += ((usage.outputTokens + usage.summaryOutputTokens) * price.output) / 1e6;
  return d;
}

/** Token split of a whole session: cache reads, cache writes (or uncached sends), under one row. */
export function cacheTotals(
  requests: readonly CacheSplit[],
  price: PriceRow,
): { read: number; written: number; uncached: number } {
  let read = 0;
  let written = 0;
  let uncached = 0;
  for (const r of requests) {
    const hit = r.prefixTokens >= price.minCacheTokens ? r.prefixTokens : 0;
    read += hit;
    if (r.inputTokens >= price.minCacheTokens) written += r.inputTokens - hit;
    else uncached += r.inputTokens;
  }
  return { read, written, uncached };
}
