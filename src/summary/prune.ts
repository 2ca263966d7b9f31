import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { previewMessage } from './preview.js';

/** VT Code's `TOOL_RESULT_PRUNE_TARGET_TOKENS`. */
export const TOOL_RESULT_PRUNE_TOKENS = 4_096;

/** Options of {@link pruneOversizedToolOutputs}. */
export interface PruneOptions {
  /** Tool results estimated above this many tokens become previews (default 4,096). */
  maxTokens?: number;
}

/**
 * Replaces every tool result estimated above `maxTokens` with a head + tail preview of
 * at most `maxTokens` tokens, keeping its `toolCallId` and tool name so groups stay
 * protocol-valid and one huge dump cannot evict whole turns from the summary fork. Other
 * messages are returned as the same objects; when nothing is pruned the input array
 * itself is returned (no copy).
 */
export function pruneOversizedToolOutputs(
  messages: readonly Message[],
  est: Estimator,
  options: PruneOptions = {},
): readonly Message[] {
  const max = options.maxTokens ?? TOOL_RESULT_PRUNE_TOKENS;
  let out: Message[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role !== 'tool' || est.message(m) <= max) continue;
    out ??= messages.slice();
    out[i] = previewMessage(m, max, est);
  }
  return out ?? messages;
}
