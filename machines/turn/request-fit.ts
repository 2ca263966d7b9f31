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
