import type { History, Message } from '../messages/message.js';
import type { Estimator } from './estimator.js';

/**
 * What the provider reported for the previous request: its input tokens, and which
 * messages of the request it counted (the first `messageCount` of the request, ending with
 * `lastMessage`, checked by identity; `messages` are all of them, in order).
 */
export interface UsageAnchor {
  inputTokens: number;
  messageCount: number;
  lastMessage: Message | undefined;
  messages: readonly Message[];
}

/** Pressure of a request, with where the number came from. */
export interface AnchoredPressure {
  tokens: number;
  /** `anchored`: provider usage + local estimate of what came after; `estimated`: local estimate only. */
  source: 'anchored' | 'estimated';
}

/** Builds an anchor from the request that was just sent and the usage the provider reported for it. */
export function usageAnchor(request: History, inputTokens: number): UsageAnchor {
  return {
    inputTokens,
    messageCount: request.length,
    lastMessage: request[request.length - 1],
    messages: request.slice(),
  };
}

/**
 * Pressure of `request`: when it continues the previously sent request (the anchor's
 * last message at the same place), the provider's reported input tokens — which already
 * include system prompt and tool schemas — plus the local estimate of the messages added
 * since, re-estimating every anchored message the projection has since replaced (clearing
 * inside the prefix: the provider counted the original, the next request carries the stub);
 * otherwise (no anchor, a compacted request that no longer continues it) `overhead` + the
 * local estimate alone, which must always work.
 */
export function anchoredPressure(
  request: History,
  estimator: Estimator,
  overhead: number,
  anchor?: UsageAnchor,
): AnchoredPressure {
  const n = anchor?.messageCount ?? 0;
  if (anchor && n > 0 && request.length >= n && request[n - 1] === anchor.lastMessage) {
    let tokens = anchor.inputTokens;
    for (let i = 0; i < n; i++) {
      const sent = anchor.messages[i];
      if (request[i] !== sent) tokens += estimator.message(request[i]) - estimator.message(sent);
    }
    for (let i = n; i < request.length; i++) tokens += estimator.message(request[i]);
    return { tokens: Math.max(0, tokens), source: 'anchored' };
  }
  return { tokens: overhead + estimator.history(request), source: 'estimated' };
}
