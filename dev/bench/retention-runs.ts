import type { Estimator } from '../../src/estimate/estimator.js';
import type { Limits } from '../../src/projection/budgets.js';
import { cacheTotals, sessionDollars } from '../replay/cost.js';
import { PRICES, PRIMARY_PRICE, type PriceRow } from '../replay/prices.js';
import { emptyTotals, replaySession, type ReplayResult, type ReplayTotals } from '../replay/replay.js';
import type { RetentionPolicy } from '../replay/types.js';
import type { CorpusSession } from './corpus-sessions.js';

/** The output reserved from every window of 32k and more … */
const RESERVED_OUTPUT = 8_000;

/**
 * Limits of one window in the pilot (no separate prompt prefix: system prompts are in the
 * histories). Small windows reserve a quarter of the window for output, so 8k still has a prompt budget.
 */
export function windowLimits(window: number): Limits {
  return { capacity: window, reservedOutput: Math.min(RESERVED_OUTPUT, Math.floor(window / 4)) };
}

/** One session under one policy: its replay, or the error that stopped it. */
export type SessionRun = { ok: true; result: ReplayResult; dollars: number[] } | { ok: false; error: string };

/** Replays of every session under one policy at one window. */
export interface PolicyRun {
  policy: RetentionPolicy;
  perSession: SessionRun[];
  /** Sums over the sessions that replayed. */
  totals: ReplayTotals;
  /** Dollars over the sessions that replayed, one per {@link PRICES} row. */
  dollars: number[];
  /** Sessions where the policy failed, with the error. */
  failures: Array<{ session: string; error: string }>;
}

function dollarsOf(result: ReplayResult): number[] {
  const usage = {
    requests: result.turns.map((t) => ({ prefixTokens: t.prefixTokens, inputTokens: t.projectedTokens })),
    outputTokens: result.totals.outputTokens,
    summaryInputTokens: result.totals.summaryInputTokens,
    summaryCachedTokens: result.totals.summaryCachedTokens,
    summaryOutputTokens: result.totals.summaryOutputTokens,
  };
  return PRICES.map((p) => sessionDollars(usage, p));
}

/** Sums a policy's session runs. */
export function policyRun(
  policy: RetentionPolicy,
  perSession: SessionRun[],
  names: readonly string[],
): PolicyRun {
  const totals = emptyTotals();
  const dollars = PRICES.map(() => 0);
  const failures: PolicyRun['failures'] = [];
  perSession.forEach((s, i) => {
    if (!s.ok) {
      failures.push({ session: names[i], error: s.error });
      return;
    }
    for (const k of Object.keys(totals) as Array<keyof ReplayTotals>) totals[k] += s.result.totals[k];
    s.dollars.forEach((d, p) => (dollars[p] += d));
  });
  return { policy, perSession, totals, dollars, failures };
}

/**
 * Replays every session under every policy at one window. A policy that throws on a session
 * is recorded as failed there (with the error) and the run goes on.
 */
export async function runWindow(
  sessions: readonly CorpusSession[],
  window: number,
  policies: readonly RetentionPolicy[],
  estimator: Estimator,
  log?: (line: string) => void,
): Promise<PolicyRun[]> {
  const runs: PolicyRun[] = [];
  for (const policy of policies) {
    const started = performance.now();
    const perSession: SessionRun[] = [];
    for (const s of sessions) {
      try {
        const result = await replaySession(s.messages, {
          policy,
          limits: windowLimits(window),
          estimator,
          needs: s.needs,
        });
        perSession.push({ ok: true, result, dollars: dollarsOf(result) });
      } catch (e) {
        perSession.push({ ok: false, error: oneLineError(e) });
      }
    }
    const run = policyRun(
      policy,
      perSession,
      sessions.map((s) => s.name),
    );
    runs.push(run);
    log?.(
      `bench: retention ${window / 1000}k ${policy.name}: fired on ${firedSessions(run)}/${sessions.length}${run.failures.length > 0 ? `, failed on ${run.failures.length}` : ''} (${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
  }
  return runs;
}

function oneLineError(e: unknown): string {
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return text.split('\n')[0].slice(0, 200);
}

/** Restricts a window's runs to a subset of sessions (by index), re-summed. */
export function subsetRuns(
  runs: readonly PolicyRun[],
  indices: readonly number[],
  names: readonly string[],
): PolicyRun[] {
  return runs.map((r) =>
    policyRun(
      r.policy,
      indices.map((i) => r.perSession[i]),
      indices.map((i) => names[i]),
    ),
  );
}

/** Recall of needed evidence: verbatim plus compacted results the summary still carries (1 when nothing was needed). */
export function recallOf(t: ReplayTotals): number {
  return t.needed === 0 ? 1 : (t.present + t.summaryRecalled) / t.needed;
}

/** Summary calls per 10 turns (agent steps): what compaction costs in calls, comparable across windows. */
export function summaryCallsPer10(t: ReplayTotals): number {
  return t.turns === 0 ? 0 : (10 * t.summaryCalls) / t.turns;
}

/** Recall counting only results present verbatim. */
export function verbatimRecallOf(t: ReplayTotals): number {
  return t.needed === 0 ? 1 : t.present / t.needed;
}

/** Tokens: request tokens plus summary-call input tokens. */
export function totalTokensOf(t: ReplayTotals): number {
  return t.requestTokens + t.summaryInputTokens;
}

/** Dollars under the primary price row (the frontier's cost axis). */
export function costOf(run: PolicyRun, price: PriceRow = PRIMARY_PRICE): number {
  return run.dollars[PRICES.indexOf(price)];
}

/** The cache split of a run's requests under the primary price row. */
export function cacheSplitOf(run: PolicyRun): { read: number; written: number; uncached: number } {
  const requests = run.perSession.flatMap((s) =>
    s.ok ? s.result.turns.map((t) => ({ prefixTokens: t.prefixTokens, inputTokens: t.projectedTokens })) : [],
  );
  return cacheTotals(requests, PRIMARY_PRICE);
}

/**
 * A policy whose requests an agent could actually use: it ran on every session, every
 * request protocol-valid and still carrying the user's task.
 */
export function isAdmissible(run: PolicyRun): boolean {
  return run.failures.length === 0 && run.totals.invalidRequests === 0 && run.totals.taskLostTurns === 0;
}

/** Names of the runs that dominate `run` on recall vs dollars (≥ and ≤, one strictly); optionally admissible ones only. */
export function dominators(run: PolicyRun, runs: readonly PolicyRun[], admissibleOnly = false): string[] {
  const r = recallOf(run.totals);
  const c = costOf(run);
  return runs
    .filter((o) => o !== run && (!admissibleOnly || isAdmissible(o)))
    .filter((o) => {
      const or = recallOf(o.totals);
      const oc = costOf(o);
      return or >= r && oc <= c && (or > r || oc < c);
    })
    .map((o) => o.policy.name);
}

/** True when `a` is strictly better than `b`: at least as much recall for less money, or more recall for no more. */
export function strictlyBetter(a: PolicyRun, b: PolicyRun): boolean {
  const ar = recallOf(a.totals);
  const br = recallOf(b.totals);
  return ar >= br && costOf(a) <= costOf(b) && (ar > br || costOf(a) < costOf(b));
}

/** Sessions (of those that replayed) where the policy changed at least one request. */
export function firedSessions(run: PolicyRun): number {
  return run.perSession.filter((s) => s.ok && s.result.totals.actedTurns > 0).length;
}

/** Sessions on which the policy ran. */
export function okSessions(run: PolicyRun): number {
  return run.perSession.filter((s) => s.ok).length;
}

export { PRICES };
