import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { resolveBudgets, type Limits } from '../projection/budgets.js';
import type { ClearingPolicy } from '../projection/clearing-policy.js';
import { effectiveLimits } from '../projection/effective-limits.js';
import { projectRequest } from '../projection/project-request.js';
import { compactOnce } from './compact-once.js';

/** One turn of a session timeline: the request before the recorded assistant message. */
export interface TimelineTurn {
  /** Index of the assistant message in the session. */
  index: number;
  /** Tokens of the live history before projection. */
  before: number;
  /** Tokens of the request sent (after clearing, and after compaction when it ran). */
  after: number;
  /** Tool results cleared in the request. */
  cleared: number;
  /** Compaction ran at this turn. */
  compacted: boolean;
}

/** A session replayed turn by turn through projection and offline compaction. */
export interface SessionTimeline {
  turns: TimelineTurn[];
  capacity: number | null;
  localTrigger: number;
  compactionThreshold: number | null;
}

/** Options of {@link sessionTimeline}. */
export interface TimelineOptions {
  limits: Limits;
  policy?: Partial<ClearingPolicy>;
  estimator: Estimator;
}

/**
 * Replays a recorded session the way a Compactor session would have sent it: before every
 * assistant message the history so far is projected (normalize, clear); when the request
 * reaches the compaction threshold the history is compacted once with the offline
 * summarizer (no network) and projected again (H1, H3, H5).
 */
export async function sessionTimeline(
  session: readonly Message[],
  opts: TimelineOptions,
): Promise<SessionTimeline> {
  const est = opts.estimator;
  const limits = effectiveLimits(opts.limits, opts.policy);
  const budgets = resolveBudgets(limits);
  const prefix = Math.max(0, limits.prefixTokens ?? 0);
  const threshold = budgets.compactionThreshold;
  const turns: TimelineTurn[] = [];
  let live: Message[] = [];
  let next = 0;
  for (let t = 0; t < session.length; t++) {
    if (session[t].role !== 'assistant') continue;
    while (next < t) live.push(session[next++]);
    const before = est.history(live);
    let projected = projectRequest(live, { limits: opts.limits, policy: opts.policy, estimator: est });
    let compacted = false;
    if (threshold !== null && projected.diagnostics.projectedTokens + prefix >= threshold) {
      const r = await compactOnce(live, { estimator: est, limits, budgets });
      if (r.history) {
        live = r.history;
        compacted = true;
        projected = projectRequest(live, { limits: opts.limits, policy: opts.policy, estimator: est });
      }
    }
    turns.push({
      index: t,
      before,
      after: projected.diagnostics.projectedTokens,
      cleared: projected.diagnostics.clearedResults,
      compacted,
    });
  }
  return {
    turns,
    capacity: budgets.capacity,
    localTrigger: budgets.localTrigger,
    compactionThreshold: threshold,
  };
}
