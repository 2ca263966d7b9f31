/**
 * Prices the cost model uses, in US dollars per million tokens. No network here, so these are
 * the list prices as the providers published them, as of August 2025 (re-check before quoting):
 *
 * - OpenAI, "Pricing" page (openai.com/api/pricing), GPT-5: input $1.25, cached input $0.125,
 *   output $10.00. Caching is automatic for prompts of 1,024 tokens or more; writing the cache
 *   costs nothing extra (a cache write is billed as ordinary input).
 * - Anthropic, "Pricing" page (anthropic.com/pricing and docs.anthropic.com "Prompt caching"),
 *   Claude Sonnet 4: input $3.00, 5-minute cache write $3.75 (1.25× input), cache read $0.30,
 *   output $15.00. Minimum cacheable prompt 1,024 tokens.
 * - Google, "Gemini Developer API pricing" page (ai.google.dev/gemini-api/docs/pricing),
 *   Gemini 2.5 Pro, prompts up to 200k tokens: input $1.25, cached input $0.31, output $10.00.
 *   Implicit caching (no write charge, no storage fee) from 2,048 tokens on 2.5 Pro.
 */
export interface PriceRow {
  provider: 'openai' | 'anthropic' | 'gemini';
  model: string;
  /** $ per million uncached input tokens. */
  input: number;
  /** $ per million input tokens read from the cache. */
  cachedInput: number;
  /** $ per million input tokens written to the cache (= input when writing is free). */
  cacheWrite: number;
  /** $ per million output tokens. */
  output: number;
  /** Shortest prefix the provider caches. */
  minCacheTokens: number;
}

export const PRICES: readonly PriceRow[] = [
  {
    provider: 'anthropic',
    model: 'claude-sonnet-4',
    input: 3,
    cachedInput: 0.3,
    cacheWrite: 3.75,
    output: 15,
    minCacheTokens: 1024,
  },
  {
    provider: 'openai',
    model: 'gpt-5',
    input: 1.25,
    cachedInput: 0.125,
    cacheWrite: 1.25,
    output: 10,
    minCacheTokens: 1024,
  },
  {
    provider: 'gemini',
    model: 'gemini-2.5-pro',
    input: 1.25,
    cachedInput: 0.31,
    cacheWrite: 1.25,
    output: 10,
    minCacheTokens: 2048,
  },
];

/** The price row the frontier is drawn with (the one provider that charges for cache writes). */
export const PRIMARY_PRICE = PRICES[0];
