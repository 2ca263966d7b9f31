import type { History, Message } from '../messages/message.js';
import type { Estimator } from './estimator.js';

/**
 * What the provider reported for the previous request (T3): its input tokens, and which
 * messages of the request it counted (the first `messageCount` of the request, ending with
 * `lastMessage`, checked by identity).
 */
export interface UsageAnchor {
  inputTokens: number;
  messageCount: number;
  lastMessage: Message | undefined;
}

/** Pressure of a request, with where the number came from. */
export interface AnchoredPressure {
  tokens: number;
  /** `anchored`: provider usage + local estimate of what came after; `estimated`: local estimate only. */
  source: 'anchored' | 'estimated';
}

/** Builds an anchor from the request that was just sent and the usage the provider reported for it. */
export function usageAnchor(request: History, inputTokens: number): UsageAnchor {
  return { inputTokens, messageCount: request.length, lastMessage: request[request.length - 1] };
}

/**
 * Pressure of `request` (T3): when it starts with the previously sent request (same
 * message objects up to the anchor, checked in O(1) at the anchor's last message), the
 * provider's reported input tokens — which already include system prompt and tool schemas —
 * plus the local estimate of the messages added since; otherwise (no anchor, a cleared or
 * compacted request that no longer starts the same way) `overhead` + the local estimate
 * alone, which must always work.
 */
export function anchoredPressure(
  request: History,
  estimator: Estimator,
  overhead: number,
  anchor?: UsageAnchor,
): AnchoredPressure {
  const n = anchor?.messageCount ?? 0;
  if (anchor && n > 0 && request.length >= n && request[n - 1] === anchor.lastMessage) {
    let after = 0;
    for (let i = n; i < request.length; i++) after += estimator.message(request[i]);
    return { tokens: anchor.inputTokens + after, source: 'anchored' };
  }
  return { tokens: overhead + estimator.history(request), source: 'estimated' };
}
