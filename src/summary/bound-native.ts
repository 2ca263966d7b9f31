import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { isNativeSummary, itemsOf } from '../providers/opaque-items.js';
import { boundHistoryForSummary } from './bound.js';
import { isSummaryMessage } from './summary-message.js';

/**
 * Whether a message marks an earlier compaction: a native compaction item or block (OpenAI
 * `compaction*` items, Anthropic `compaction` blocks) or a Compactor summary.
 */
export function isCompactionMarker(m: Message): boolean {
  return (
    isNativeSummary(m) ||
    isSummaryMessage(m) ||
    itemsOf(m).some((i) => typeof i.type === 'string' && i.type.startsWith('compaction'))
  );
}

/** The history a native request is bounded to, and its estimate. */
export interface NativeBound {
  messages: Message[];
  inputTokens: number;
}

/**
 * Bounds the input of a native compaction request to `budget` tokens while keeping the
 * compaction boundary: the leading system messages and everything up to the latest compaction
 * marker stay as they are (the marker is the compacted state of all that came before it); what
 * follows is bounded like a summary fork (complete recent protocol groups, else previews).
 * An unknown budget, or a history that already fits, is sent whole.
 */
export function boundHistoryForNative(
  history: readonly Message[],
  budget: number | null,
  est: Estimator,
): NativeBound {
  const whole = { messages: history.slice(), inputTokens: est.history(history) };
  if (budget === null || whole.inputTokens <= budget) return whole;
  let head = 0;
  while (head < history.length && history[head].role === 'system') head++;
  for (let i = history.length - 1; i >= head; i--)
    if (isCompactionMarker(history[i])) {
      head = i + 1;
      break;
    }
  const kept = history.slice(0, head);
  const fork = boundHistoryForSummary(history.slice(head), {
    budget: budget - est.history(kept),
    instructionsTokens: 0,
    estimator: est,
    allowance: 'native compaction input budget',
    includeLeading: true,
  });
  const messages = [...kept, ...fork.messages];
  return { messages, inputTokens: est.history(messages) };
}
