import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { previewMessage, previewToFit } from './preview.js';
import { protocolUnits } from './protocol-groups.js';

/** VT Code caps the leading summary at this many tokens whenever bounding is needed. */
export const SUMMARY_CAP_TOKENS = 4_096;

/**
 * The output budget of a locally rebuilt history: VT Code's `H(W) = W − floor(W/8) − 512`
 * (safety headroom), never more than the window minus the output reserve and the frozen
 * prefix, so the next request fits. Subtractions saturate at 0; unknown window → `null`.
 */
export function compactedHistoryBudget(
  capacity: number | null,
  reservedOutput = 0,
  prefixTokens = 0,
): number | null {
  if (capacity === null || capacity <= 0) return null;
  const headroom = Math.max(capacity - Math.floor(capacity / 8) - 512, 0);
  return Math.max(Math.min(headroom, capacity - reservedOutput - prefixTokens), 0);
}

/**
 * Output bounding of the rebuilt history `[summary, ...retained, ...tail]` where
 * `tailStart` is the tail's index. Returns the input when it fits or the budget is
 * unknown. Otherwise: the tail is previewed into what remains after reserving room for
 * the summary (so the summary always survives, unlike a tail that eats the whole
 * budget); the summary is capped at `min(remaining, 4,096)`; retained units follow while
 * they fit whole, or as previews for the first that does not, and the walk stops there.
 * Units (batches) are never split, so the result stays protocol-valid.
 */
export function boundCompactedHistory(
  messages: readonly Message[],
  tailStart: number,
  budget: number | null,
  est: Estimator,
): Message[] {
  if (budget === null || est.history(messages) <= budget || messages.length === 0) return messages.slice();
  const [summary, ...rest] = messages.slice(0, tailStart);
  let tail = messages.slice(tailStart);
  const summaryFloor = summary
    ? Math.min(est.message(summary), SUMMARY_CAP_TOKENS, Math.floor(budget / 2))
    : 0;
  if (est.history(tail) > budget - summaryFloor) tail = previewToFit(tail, budget - summaryFloor, est);
  let remaining = budget - est.history(tail);
  const prefix: Message[] = [];
  if (summary) {
    const capped = previewMessage(summary, Math.min(Math.max(remaining, 0), SUMMARY_CAP_TOKENS), est);
    prefix.push(capped);
    remaining -= est.message(capped);
  }
  for (const unit of protocolUnits(rest)) {
    const slice = rest.slice(unit.start, unit.end);
    const tokens = est.history(slice);
    if (tokens <= remaining) {
      prefix.push(...slice);
      remaining -= tokens;
      continue;
    }
    const previews = previewToFit(slice, remaining, est);
    if (est.history(previews) <= remaining) prefix.push(...previews);
    break;
  }
  return [...prefix, ...tail];
}
