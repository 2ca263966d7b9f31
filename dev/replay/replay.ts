import type { Estimator } from '../../src/estimate/estimator.js';
import { textOf, type Message } from '../../src/messages/message.js';
import { resolveBudgets, type Budgets, type Limits } from '../../src/projection/budgets.js';
import { isRequestHistoryValid } from '../../src/projection/normalize.js';
import type { SummaryClient } from '../../src/providers/types.js';
import { sharedPrefixTokens } from './cost.js';
import { findEvidenceNeeds, type EvidenceNeeds } from './evidence.js';
import { scoreNeeds } from './score.js';
import { baselineDriver, productDriver } from './drivers.js';
import type { RetentionPolicy } from './types.js';

/** Options of {@link replaySession}. */
export interface ReplayOptions {
  policy: RetentionPolicy;
  limits: Limits;
  estimator: Estimator;
  /** Summary client for compaction (default: the offline summarizer). */
  summarizer?: SummaryClient;
  /** Precomputed {@link findEvidenceNeeds} of the session (computed when absent). */
  needs?: EvidenceNeeds;
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
  /** Of those, the tokens the provider's cache serves (summaries over the last request sent). */
  summaryCachedTokens: number;
  /** Compaction ran but could not bring the request under the threshold (or failed). */
  overThreshold: boolean;
  /** Request is protocol-valid (every call answered right after its batch, nothing orphaned). */
  valid: boolean;
  /** Results this turn needed, and how many of them the request held verbatim. */
  needed: number;
  present: number;
  /** Needed results present, or reached by recall from an id the request shows. */
  recoverable: number;
  /** Recall calls those would take (one per id, one per page of a span's list). */
  recallCalls: number;
  /** Recoverable ones reached through a summarized span's list (their own id not shown). */
  viaSpan: number;
  /** Tokens of needed results that were not present (what re-reading them would cost). */
  rereadTokens: number;
  /**
   * The session's first user message (the task) is in the request, verbatim or restated by a
   * summary that starts it the same way (true when there is none yet).
   */
  taskKept: boolean;
  /** The policy cleared or pruned something in the request at this turn (compaction aside). */
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
  /** Compactions at this turn that carried a receipt, and those whose summary had items added verbatim. */
  receiptCompactions: number;
  amendedCompactions: number;
}

/** Sums of a replay. */
export interface ReplayTotals {
  turns: number;
  /** Σ request tokens over all turns (the session's input cost). */
  requestTokens: number;
  summaryCalls: number;
  summaryInputTokens: number;
  summaryCachedTokens: number;
  needed: number;
  present: number;
  recoverable: number;
  recallCalls: number;
  viaSpan: number;
  rereadTokens: number;
  invalidRequests: number;
  overThresholdTurns: number;
  /** Turns whose request held neither the task message nor a summary restating its start. */
  taskLostTurns: number;
  /** Turns at which the policy changed the request. */
  actedTurns: number;
  /** Σ cached-prefix tokens, Σ agent output tokens, Σ summary output tokens. */
  prefixTokens: number;
  outputTokens: number;
  summaryOutputTokens: number;
  compactedNeeded: number;
  summaryRecalled: number;
  receiptCompactions: number;
  amendedCompactions: number;
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
    summaryCachedTokens: 0,
    needed: 0,
    present: 0,
    recoverable: 0,
    recallCalls: 0,
    viaSpan: 0,
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
    receiptCompactions: 0,
    amendedCompactions: 0,
  };
}

/** Sums per-turn records. */
export function totalsOf(turns: readonly TurnRecord[]): ReplayTotals {
  const t: ReplayTotals = { ...emptyTotals(), turns: turns.length };
  for (const r of turns) {
    t.requestTokens += r.projectedTokens;
    t.summaryCalls += r.summaryCalls;
    t.summaryInputTokens += r.summaryInputTokens;
    t.summaryCachedTokens += r.summaryCachedTokens;
    t.needed += r.needed;
    t.present += r.present;
    t.recoverable += r.recoverable;
    t.recallCalls += r.recallCalls;
    t.viaSpan += r.viaSpan;
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
    t.receiptCompactions += r.receiptCompactions;
    t.amendedCompactions += r.amendedCompactions;
  }
  return t;
}

/**
 * Replays a recorded session turn by turn: before every recorded assistant message the
 * messages recorded since the last one reach the policy's driver, which returns the request
 * sent. Compactor settings run the product itself (a `createCompactorSession` turn per
 * step); the baselines build their request with their own rule and compact with the
 * product's compaction pass (see `drivers.ts`). Each request is validated and scored
 * against the evidence needs.
 */
export async function replaySession(
  session: readonly Message[],
  options: ReplayOptions,
): Promise<ReplayResult> {
  const est = options.estimator;
  const budgets = resolveBudgets(options.limits);
  const needs = options.needs ?? findEvidenceNeeds(session);
  const driverOptions = { limits: options.limits, estimator: est, summarizer: options.summarizer };
  const driver = options.policy.clearing
    ? productDriver(options.policy.clearing, driverOptions)
    : baselineDriver(options.policy, driverOptions);

  const taskIndex = session.findIndex((m) => m.role === 'user');
  const taskText = taskIndex < 0 ? undefined : textOf(session[taskIndex].content);
  const lead = taskText === undefined ? '' : taskLead(taskText);
  let next = 0;
  const turns: TurnRecord[] = [];
  let previous: readonly Message[] | null = null;
  try {
    for (const t of turnIndices(session)) {
      // The agent's message of the previous step joins the history with this step's messages.
      const step = await driver.turn(session.slice(next, t));
      next = t;
      const request = step.request;
      options.onRequest?.(t, request);

      const need = needs.get(t) ?? [];
      const score = scoreNeeds(need, session, request, est, driver.recall);
      const prefixTokens = sharedPrefixTokens(previous, request, est);
      // A snapshot: the cache only holds what was actually sent.
      previous = request.slice();
      turns.push({
        turn: t,
        historyTokens: step.historyTokens,
        projectedTokens: est.history(request),
        summaryCalls: step.summary.calls,
        summaryInputTokens: step.summary.inputTokens,
        summaryCachedTokens: step.summary.cachedInputTokens,
        overThreshold: step.overThreshold,
        valid: isRequestHistoryValid(request),
        needed: need.length,
        ...score,
        acted: step.acted,
        prefixTokens,
        outputTokens: est.message(session[t]),
        summaryOutputTokens: step.summary.outputTokens,
        receiptCompactions: step.receipts.compactions,
        amendedCompactions: step.receipts.amended,
        taskKept: taskIndex < 0 || taskIndex > t || hasTask(request, taskText, lead),
      });
    }
  } finally {
    driver.close();
  }
  return { policy: options.policy.name, budgets, turns, totals: totalsOf(turns) };
}

/** The start of a task as a summary restates it: its first 80 characters, whitespace folded. */
function taskLead(task: string): string {
  return task.replace(/\s+/g, ' ').trim().slice(0, 80);
}

/** The task is in `request`: its message verbatim, or a non-tool message (a summary) that restates its start. */
function hasTask(request: readonly Message[], task: string | undefined, lead: string): boolean {
  if (request.some((m) => m.role === 'user' && textOf(m.content) === task)) return true;
  return (
    lead !== '' &&
    request.some((m) => m.role !== 'tool' && textOf(m.content).replace(/\s+/g, ' ').includes(lead))
  );
}
