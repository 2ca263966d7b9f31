import type { SentRequest } from './cache-policy.js';
import type { FixedPart } from './turn.types.js';

/**
 * The two rules every request obeys, whoever builds it (a turn, or the session between turns):
 * a window that cannot hold the fixed part of a request is a configuration error, and a request
 * over the prompt budget is made to fit before it is sent.
 */

/** The fixed part of a request alone (prompt, tools, task, reserved output) is larger than the window. */
export function isFixedPartTooLarge(f: FixedPart | null | undefined): boolean {
  return f != null && f.capacity !== null && f.prefix + f.task + f.reserved > f.capacity;
}

/** A request of `pressureTokens` (history and prefix) is over the prompt budget; never with an unknown budget. */
export function isOverPromptBudget(
  pressureTokens: number | null,
  promptBudgetTokens: number | null,
): boolean {
  return promptBudgetTokens !== null && pressureTokens !== null && pressureTokens > promptBudgetTokens;
}

/** A request with no known bound: nothing needs to be left out. */
const UNBOUNDED = Number.MAX_SAFE_INTEGER;

/** The pressure clearing first must get under: one token below this turn's threshold. */
export function clearFirstTarget(thresholdTokens: number | null): number {
  return thresholdTokens === null ? UNBOUNDED : thresholdTokens - 1;
}

/** The pressure a request is made to fit: the prompt budget, or no bound when it is unknown. */
export function fitTarget(promptBudgetTokens: number | null): number {
  return promptBudgetTokens ?? UNBOUNDED;
}

/**
 * The results the next request keeps cleared: every one the last request sent had cleared,
 * unless the session's own rules decide again each turn. A result cleared to make room and
 * put back on the next turn is cleared again at once: that rewrites the cached request every
 * turn and clears the newest results sooner than one step that stays would.
 */
export function keptCleared(sent: SentRequest | null | undefined, clearsEachTurn = false): readonly string[] {
  return clearsEachTurn ? [] : (sent?.clearedCallIds ?? []);
}
