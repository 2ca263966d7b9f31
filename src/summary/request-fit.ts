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
  if (tools && tools.length > 0) n += toolTokens(tools, est);
  return n;
}

/** Tokens of tool lists by list and estimator: a session passes the same list to every turn. */
const toolCounts = new WeakMap<readonly ToolSchema[], WeakMap<Estimator, number>>();

/** Tokens of a tool list's JSON, serialized once per list and estimator (an agent's run to tens of KB). */
function toolTokens(tools: readonly ToolSchema[], est: Estimator): number {
  let byEstimator = toolCounts.get(tools);
  if (byEstimator === undefined) toolCounts.set(tools, (byEstimator = new WeakMap()));
  let n = byEstimator.get(est);
  if (n === undefined) byEstimator.set(est, (n = est.text(JSON.stringify(tools))));
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
