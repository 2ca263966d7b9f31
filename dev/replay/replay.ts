import type { Estimator } from '../../src/estimate/estimator.js';
import { textOf, type Message } from '../../src/messages/message.js';
import { resolveBudgets, type Budgets, type Limits } from '../../src/projection/budgets.js';
import { isRequestHistoryValid, normalizeHistory } from '../../src/projection/normalize.js';
import type { SummaryClient } from '../../src/providers/types.js';
import { createOfflineSummarizer } from '../../src/summary/offline/offline-summarizer.js';
import { cacheAwareThreshold, sharedPrefixLength } from '../../src/projection/cache-aware.js';
import { compactOnce, type CompactOnceResult } from '../../src/stats/compact-once.js';
import { sharedPrefixTokens } from './cost.js';
import { findEvidenceNeeds, type EvidenceNeeds } from './evidence.js';
import { scoreNeeds } from './score.js';
import { createWaitByCost } from './wait-by-cost.js';
import type { PolicyContext, RetentionPolicy } from './types.js';

/** Options of {@link replaySession}. */
export interface ReplayOptions {
  policy: RetentionPolicy;
  limits: Limits;
  estimator: Estimator;
  /** Summary client for compaction (default: the offline summarizer). */
  summarizer?: SummaryClient;
  /** Precomputed {@link findEvidenceNeeds} of the session (computed when absent). */
  needs?: EvidenceNeeds;
  /**
   * Compaction passes shared by the replays of one session at one window (the bench replays
   * it under every policy). The live history at a turn depends only on where it was
   * compacted before, so each distinct pass runs once. Used with the offline summarizer only.
   */
  compactions?: Map<string, CompactOnceResult>;
  /** Called with every projected request (tests inspect what was sent). */
  onRequest?: (turn: number, request: readonly Message[]) => void;
}

/** What happened at one turn (the request sent before one recorded assistant message). */
export interface TurnRecord {
  /** Index of the assistant message in the recorded session. */
  turn: number;
  /** Tokens of the live history before the policy ran. */
  historyTokens: number;
  /** Tokens of the request actually sent (after the policy and any compaction). */
  projectedTokens: number;
  /** Summary calls made at this turn (0 or 1). */
  summaryCalls: number;
  /** Estimated input tokens of those summary calls. */
  summaryInputTokens: number;
  /** Compaction was needed but could not bring the request under the threshold (or failed). */
  overThreshold: boolean;
  /** Request is protocol-valid (every call answered right after its batch, nothing orphaned). */
  valid: boolean;
  /** Results this turn needed, and how many of them the request held verbatim. */
  needed: number;
  present: number;
  /** Tokens of needed results that were not present (what re-reading them would cost). */
  rereadTokens: number;
  /** The session's first user message (the task) is in the request verbatim (true when there is none yet). */
  taskKept: boolean;
  /** The policy changed the request at this turn (before any compaction). */
  acted: boolean;
  /** Tokens of the longest message prefix this request shares with the previous one (the cache hit). */
  prefixTokens: number;
  /** Tokens of the recorded assistant message (the agent's output, the same under every policy). */
  outputTokens: number;
  /** Estimated output tokens of this turn's summary calls (the summaries). */
  summaryOutputTokens: number;
  /** Needed results gone from the request because they were compacted (no message with their call id, a summary present). */
  compactedNeeded: number;
  /** Of those, the ones whose fact (path, identifier, code or error line) the summary still carries. */
  summaryRecalled: number;
}

/** Sums of a replay. */
export interface ReplayTotals {
  turns: number;
  /** Σ request tokens over all turns (the session's input cost). */
  requestTokens: number;
  summaryCalls: number;
  summaryInputTokens: number;
  needed: number;
  present: number;
  rereadTokens: number;
  invalidRequests: number;
  overThresholdTurns: number;
  /** Turns whose request no longer held the task message verbatim. */
  taskLostTurns: number;
  /** Turns at which the policy changed the request. */
  actedTurns: number;
  /** Σ cached-prefix tokens, Σ agent output tokens, Σ summary output tokens. */
  prefixTokens: number;
  outputTokens: number;
  summaryOutputTokens: number;
  compactedNeeded: number;
  summaryRecalled: number;
}

/** A replayed session under one policy. */
export interface ReplayResult {
  policy: string;
  budgets: Budgets;
  turns: TurnRecord[];
  totals: ReplayTotals;
}

/** Turn points of a session: the index of every assistant message. */
export function turnIndices(session: readonly Message[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < session.length; i++) if (session[i].role === 'assistant') out.push(i);
  return out;
}

/** All-zero totals (the start of every sum). */
export function emptyTotals(): ReplayTotals {
  return {
    turns: 0,
    requestTokens: 0,
    summaryCalls: 0,
    summaryInputTokens: 0,
    needed: 0,
    present: 0,
    rereadTokens: 0,
    invalidRequests: 0,
    overThresholdTurns: 0,
    taskLostTurns: 0,
    actedTurns: 0,
    prefixTokens: 0,
    outputTokens: 0,
    summaryOutputTokens: 0,
    compactedNeeded: 0,
    summaryRecalled: 0,
  };
}

/** Sums per-turn records. */
export function totalsOf(turns: readonly TurnRecord[]): ReplayTotals {
  const t: ReplayTotals = { ...emptyTotals(), turns: turns.length };
  for (const r of turns) {
    t.requestTokens += r.projectedTokens;
    t.summaryCalls += r.summaryCalls;
    t.summaryInputTokens += r.summaryInputTokens;
    t.needed += r.needed;
    t.present += r.present;
    t.rereadTokens += r.rereadTokens;
    if (!r.valid) t.invalidRequests++;
    if (r.overThreshold) t.overThresholdTurns++;
    if (!r.taskKept) t.taskLostTurns++;
    if (r.acted) t.actedTurns++;
    t.prefixTokens += r.prefixTokens;
    t.outputTokens += r.outputTokens;
    t.summaryOutputTokens += r.summaryOutputTokens;
    t.compactedNeeded += r.compactedNeeded;
    t.summaryRecalled += r.summaryRecalled;
  }
  return t;
}

/**
 * Replays a recorded session turn by turn through request assembly (H1): the live history
 * receives every recorded message before the turn, is normalized (N1–N5, as every agent
 * repairs pairing before sending), and the policy builds the request. When the request's
 * pressure (tokens + prompt prefix) reaches the compaction threshold (H5), the FULL live
 * history is compacted with the summary pipeline (L1–L3 prepare, the summary client, L7
 * rebuild) and the request is rebuilt from the new history (H3); an unhelpful or failed
 * pass keeps the history. Each request is validated and scored against the evidence needs.
 */
export async function replaySession(
  session: readonly Message[],
  options: ReplayOptions,
): Promise<ReplayResult> {
  const est = options.estimator;
  const budgets = resolveBudgets(options.limits);
  const ctx: PolicyContext = { estimator: est, limits: options.limits, budgets };
  const needs = options.needs ?? findEvidenceNeeds(session);
  const summarizer = options.summarizer ?? createOfflineSummarizer({ estimator: est });
  const prefix = Math.max(0, options.limits.prefixTokens ?? 0);
  const threshold = budgets.compactionThreshold;

  const taskIndex = session.findIndex((m) => m.role === 'user');
  const taskText = taskIndex < 0 ? undefined : textOf(session[taskIndex].content);
  let live: Message[] = [];
  let next = 0;
  const turns: TurnRecord[] = [];
  const promptBudget =
    budgets.capacity === null ? null : Math.max(budgets.capacity - (options.limits.reservedOutput ?? 0), 0);
  let previous: readonly Message[] | null = null;
  const byCost = options.policy.compactionWaitByCost ? createWaitByCost(budgets) : undefined;
  // Where this replay's history was compacted so far: the key of the shared compaction memo.
  let chain = '';
  const memo = options.summarizer ? undefined : options.compactions;
  for (const t of turnIndices(session)) {
    while (next < t) live.push(session[next++]);
    const historyTokens = est.history(live);
    const normalized = normalizeHistory(live);
    let request = await options.policy.project(normalized, ctx);
    let tokens = est.history(request);
    const acted = request.length !== normalized.length || tokens !== est.history(normalized);
    let summaryCalls = 0;
    let summaryInputTokens = 0;
    let summaryOutputTokens = 0;
    let overThreshold = false;
    const intact = previous !== null && sharedPrefixLength(previous, request) === previous.length;
    byCost?.request(intact, tokens + prefix);
    const waited = options.policy.compactionWaitsForCacheBreak
      ? cacheAwareThreshold(threshold, promptBudget, intact, options.policy.compactionWait)
      : threshold;
    const turnThreshold = byCost ? byCost.threshold(threshold, waited) : waited;
    if (turnThreshold !== null && tokens + prefix >= turnThreshold) {
      const compacted = await compact(live);
      if (compacted) {
        live = compacted;
        request = await options.policy.project(normalizeHistory(live), ctx);
        tokens = est.history(request);
        byCost?.passed(tokens + prefix);
      }
      overThreshold = tokens + prefix >= turnThreshold;
    }
    options.onRequest?.(t, request);

    const need = needs.get(t) ?? [];
    const score = scoreNeeds(need, session, request, est);
    const prefixTokens = sharedPrefixTokens(previous, request, est);
    // A snapshot: a policy may return the live history itself, which grows before the next
    // turn, and the cache only holds what was actually sent.
    previous = request.slice();
    turns.push({
      turn: t,
      historyTokens,
      projectedTokens: tokens,
      summaryCalls,
      summaryInputTokens,
      overThreshold,
      valid: isRequestHistoryValid(request),
      needed: need.length,
      ...score,
      acted,
      prefixTokens,
      outputTokens: est.message(session[t]),
      summaryOutputTokens,
      taskKept:
        taskIndex < 0 ||
        taskIndex > t ||
        request.some((m) => m.role === 'user' && textOf(m.content) === taskText),
    });

    // One local compaction pass; null when it failed or did not shrink the history.
    async function compact(history: Message[]): Promise<Message[] | null> {
      const key = `${chain}@${t}`;
      let r = memo?.get(key);
      if (r === undefined) {
        r = await compactOnce(history, { estimator: est, limits: options.limits, budgets, summarizer });
        memo?.set(key, r);
      }
      if (r.called) summaryCalls++;
      summaryInputTokens += r.inputTokens;
      summaryOutputTokens += r.outputTokens;
      if (r.history === null) return null;
      chain = key;
      return r.history.slice(); // the live history grows in place; the memo's copy must not
    }
  }
  return { policy: options.policy.name, budgets, turns, totals: totalsOf(turns) };
}
