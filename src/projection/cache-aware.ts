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

// The compaction wait is a decision of the turn machine; it lives with the machine's other policy.
export { cacheAwareThreshold, DEFAULT_COMPACTION_WAIT } from '../../machines/turn/cache-policy.js';
