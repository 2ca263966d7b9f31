import { textOf, type Message } from '../messages/message.js';
import { resolveSummaryInputBudget } from '../projection/budgets.js';
import { DEFAULT_INLINE_MAX_TOKENS } from '../providers/anthropic/inline-client.js';

// The sizes and the result shape of native compaction requests, apart from the actors that
// send them, so each rule reads on its own.

/**
 * Input allowance of a native request: the capacity less L1's safety headroom, the frozen
 * prefix and the output it asks for (null when the capacity is unknown).
 */
export function nativeAllowance(
  capacity: number | null | undefined,
  frozen: number,
  output: number,
): number | null {
  if (capacity === undefined || capacity === null) return null;
  return Math.max(0, resolveSummaryInputBudget(capacity, frozen, output, 0) ?? 0);
}

/** `max_tokens` of an inline request: the client's default, never above an eighth of the capacity. */
export function inlineOutputTokens(capacity: number | null | undefined): number | undefined {
  if (capacity === undefined || capacity === null) return undefined;
  return Math.max(1, Math.min(DEFAULT_INLINE_MAX_TOKENS, Math.floor(capacity / 8)));
}

/**
 * A native result replaces the conversation, not its system prompt: the history's leading
 * system messages open the next window, unless the provider returned them itself (O3, A3).
 */
export function withLeadingSystem(history: readonly Message[], items: readonly Message[]): Message[] {
  let lead = 0;
  while (lead < history.length && history[lead].role === 'system') lead++;
  const same = (a: Message, b: Message | undefined) =>
    b !== undefined && b.role === 'system' && textOf(b.content) === textOf(a.content);
  if (lead === 0 || history.slice(0, lead).every((m, i) => same(m, items[i]))) return [...items];
  return [...history.slice(0, lead), ...items];
}
