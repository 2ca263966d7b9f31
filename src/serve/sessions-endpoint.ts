import type { Conversations } from '../adapters/shared/conversations.js';
import { isSummaryMessage } from '../summary/summary-message.js';
import type { LastRequest } from './compacting.js';

/**
 * What `GET /compactor/sessions/:id` shows of a session: sizes, window, budgets, compactions
 * and its last request — counts only, never message text or anything the client sent as a header.
 */
export function sessionState(
  conversations: Conversations,
  id: string,
  last: LastRequest | undefined,
): Record<string, unknown> | undefined {
  const session = conversations.session(id);
  const branches = conversations.branches(id);
  if (session === undefined)
    return branches.length > 0 ? { id, open: false, stored: true, branches: branches.length } : undefined;
  const { history, limits, budgets, route } = session;
  const summaries = history.filter(isSummaryMessage).length;
  return {
    id,
    open: true,
    stored: session.store !== null,
    branches: Math.max(1, branches.length),
    messages: history.length,
    historyTokens: session.estimator.history(history),
    summaries,
    window: limits.capacity ?? null,
    reservedOutput: limits.reservedOutput ?? 0,
    prefixTokens: limits.prefixTokens ?? 0,
    budgets,
    strategy: route.strategy.kind,
    summarizer: `${route.provider}/${route.model}`,
    cacheHealth: session.cacheHealth.state(),
    lastRequest: last ?? null,
  };
}
