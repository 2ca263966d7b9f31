import type { Message } from '../../../src/messages/message.js';
import type { RetentionPolicy } from '../types.js';

/**
 * N of the sliding window. 20 is LangChain's `summarizationMiddleware` default (“keep the
 * last 20 messages”), the only documented keep-N-messages default among the peers.
 */
export const KEEP_LAST_MESSAGES = 20;

/**
 * Naive truncation baseline: once history reaches the local trigger (the same point
 * where Compactor starts clearing), send the leading system messages plus the last N
 * messages, with the cut moved forward past tool results so no result loses its call.
 */
export function keepLastMessagesPolicy(n = KEEP_LAST_MESSAGES): RetentionPolicy {
  return {
    name: `keep-last-${n}`,
    description: `Sliding window: at the local trigger keep system messages + the last ${n} messages (cut never orphans a result).`,
    source: 'baseline',
    project(history, { estimator, budgets }) {
      if (estimator.history(history) < budgets.localTrigger) return Promise.resolve(history);
      let lead = 0;
      while (lead < history.length && history[lead].role === 'system') lead++;
      let start = Math.max(lead, history.length - n);
      while (start < history.length && history[start].role === 'tool') start++;
      if (start <= lead) return Promise.resolve(history);
      const out: Message[] = [...history.slice(0, lead), ...history.slice(start)];
      return Promise.resolve(out);
    },
  };
}
