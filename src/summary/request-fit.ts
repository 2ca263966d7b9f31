import type { Estimator } from '../estimate/estimator.js';
import { resolveSummaryInputBudget } from '../projection/budgets.js';
import type { ToolSchema } from '../providers/types.js';

/**
 * The summary input budget for the request actually sent: whatever budget the caller resolved,
 * a summary request must fit the capacity with its frozen prefix (system prompt + tool schemas)
 * and the output it asks for counted.
 */

/** Largest summary output asked for when no explicit limit is set. */
export const DEFAULT_SUMMARY_OUTPUT_CAP = 8_192;

/** Estimated tokens of the frozen parent prefix a summary request carries. */
export function frozenPrefixTokens(
  system: string | undefined,
  tools: readonly ToolSchema[] | undefined,
  est: Estimator,
): number {
  let n = system ? est.text(system) : 0;
  if (tools && tools.length > 0) n += est.text(JSON.stringify(tools));
  return n;
}

/**
 * Output asked for when none is configured: `min(8,192, floor(capacity / 8))`, which stays
 * inside the summary call's safety headroom (`floor(capacity / 8) + 512`), so the input allowance need not
 * shrink for it. Unknown capacity: the provider's default.
 */
export function defaultSummaryOutputTokens(capacity: number | null): number | undefined {
  return capacity === null
    ? undefined
    : Math.max(1, Math.min(DEFAULT_SUMMARY_OUTPUT_CAP, Math.floor(capacity / 8)));
}

/** Summary input allowance of the request itself (null when the capacity is unknown). */
export function summaryRequestAllowance(
  capacity: number | null,
  frozen: number,
  explicitOutput: number | undefined,
): number | null {
  return resolveSummaryInputBudget(capacity, frozen, explicitOutput ?? 0, 0);
}

/** The caller's budget, never above the request's own allowance. */
export function fitBudget(budget: number | null, allowance: number | null): number | null {
  if (allowance === null) return budget;
  return budget === null ? allowance : Math.min(budget, allowance);
}
