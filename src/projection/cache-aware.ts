import type { Message } from '../messages/message.js';

/**
 * Prompt-cache awareness: providers cache the longest prefix a request shares with
 * the previous one, so every change to an early message makes the next request pay full price
 * for everything after it. These helpers let clearing change the prefix rarely (in steps that
 * free at least `clearAtLeast` tokens) and let compaction wait for a turn whose prefix changes
 * anyway.
 */

/**
 * Of the clearable results (oldest first, with the tokens each replacement saves), the ones
 * to clear when clearing moves in steps of at least `step` saved tokens: those whose running
 * savings lie at or below the last whole multiple of `step`. History only grows at its end
 * and protection only moves forward, so older results keep their running savings and the
 * cleared set changes only when the total crosses the next multiple; between steps the
 * request prefix stays byte-identical. `step` ≤ 0 clears every candidate.
 */
export function clearInSteps(
  candidates: readonly number[],
  savings: readonly number[],
  step: number,
): number[] {
  if (!(step > 0)) return candidates.slice();
  let total = 0;
  for (const s of savings) total += s;
  const level = Math.floor(total / step) * step;
  const out: number[] = [];
  let running = 0;
  for (let k = 0; k < candidates.length; k++) {
    running += savings[k];
    if (running > level) break;
    out.push(candidates[k]);
  }
  return out;
}

// A message's wire identity: policies that rebuild an unchanged message as a new object still
// send the same bytes, so the cache still hits.
const keys = new WeakMap<Message, string>();
function keyOf(m: Message): string {
  let k = keys.get(m);
  if (k === undefined) keys.set(m, (k = JSON.stringify(m)));
  return k;
}

/** Number of leading messages `request` shares with `previous` (0 when there is none). */
export function sharedPrefixLength(previous: readonly Message[] | null, request: readonly Message[]): number {
  if (previous === null) return 0;
  const n = Math.min(previous.length, request.length);
  let i = 0;
  while (i < n && (previous[i] === request[i] || keyOf(previous[i]) === keyOf(request[i]))) i++;
  return i;
}

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
