import { createEstimator } from '../estimate/index.js';
import { isSummaryMessage } from '../summary/summary-message.js';
import { OFFLINE_SUMMARIZER, type LastRequest } from './compacting.js';
import type { KeptConversation, ProxyConversations } from './kept-conversation.js';

/** A last request as the endpoint shows it (what is kept for the next request's counting left out). */
function shown(last: LastRequest): Omit<LastRequest, 'sent'> {
  const { sent: _sent, ...rest } = last;
  return rest;
}

/**
 * What `GET /compactor/sessions/:id` shows of a session: sizes, window, budgets, compactions
 * and its last request — counts only, never message text or anything the client sent as a header.
 */
export async function sessionState(
  conversations: ProxyConversations,
  id: string,
  last: LastRequest | undefined,
  summarizer: 'upstream' | 'offline',
  signal?: AbortSignal,
): Promise<Record<string, unknown> | undefined> {
  const session = conversations.session(id);
  if (session === undefined && conversations.kept !== undefined) {
    const kept = await conversations.kept(id, signal);
    return kept === undefined ? undefined : keptState(id, kept, last);
  }
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
    // How the last summary request was built and the share of it the upstream's cache served.
    summaryCache: last?.made.summaryCache ?? null,
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

/**
 * The same for a session kept on Restate, from what its objects hold, whichever proxy served it.
 * The window, budgets and cache health are this proxy's counts, shown only once it has served
 * the session; who wrote the summaries and with which strategy only the workers know.
 */
function keptState(
  id: string,
  kept: KeptConversation,
  last: LastRequest | undefined,
): Record<string, unknown> {
  const { session, history } = kept;
  const estimator = session?.estimator ?? createEstimator();
  return {
    id,
    open: true,
    stored: true,
    branches: kept.branches,
    messages: history.length,
    historyTokens: estimator.history(history),
    summaries: history.filter(isSummaryMessage).length,
    summariesMade: kept.compactions,
    // What the worker's last summary request cost: kept with the session, so any proxy shows it.
    summaryCache: kept.summaryCache,
    ...(session !== undefined
      ? {
          window: session.limits.capacity ?? null,
          reservedOutput: session.limits.reservedOutput ?? 0,
          prefixTokens: session.limits.prefixTokens ?? 0,
          budgets: session.budgets,
          cacheHealth: session.cacheHealth.state(),
        }
      : {}),
    summarizer: 'the Restate workers',
    lastRequest: last ?? null,
  };
}
