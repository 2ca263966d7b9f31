import type { Conversations } from '../adapters/shared/conversations.js';
import { isSummaryMessage } from '../summary/summary-message.js';
import { OFFLINE_SUMMARIZER, type LastRequest } from './compacting.js';

/** A last request as the endpoint shows it (what is kept for the next request's counting left out). */
function shown(last: LastRequest): Omit<LastRequest, 'sent'> {
  const { sent: _sent, ...rest } = last;
  return rest;
}

/**
 * What `GET /compactor/sessions/:id` shows of a session: sizes, window, budgets, compactions
 * and its last request — counts only, never message text or anything the client sent as a header.
 */
export function sessionState(
  conversations: Conversations,
  id: string,
  last: LastRequest | undefined,
  summarizer: 'upstream' | 'offline',
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
    // Summaries held in the history now; what was made is under `made` (several may be one).
    summaries,
    summariesMade: last?.made.compactions ?? 0,
    summaryCalls: last?.made.summaryCalls ?? 0,
    // What the last Local compaction had to keep and where each item landed.
    receipt: last?.made.receipt ?? null,
    // Extra upstream requests spent answering the model's recall calls.
    recallTurns: last?.made.recallTurns ?? 0,
    window: limits.capacity ?? null,
    reservedOutput: limits.reservedOutput ?? 0,
    prefixTokens: limits.prefixTokens ?? 0,
    budgets,
    strategy: route.strategy.kind,
    // Who wrote the summaries (none yet: who would).
    summarizer: last?.made.summarizer ?? (summarizer === 'offline' ? OFFLINE_SUMMARIZER : 'the upstream'),
    cacheHealth: session.cacheHealth.state(),
    lastRequest: last === undefined ? null : shown(last),
  };
}
