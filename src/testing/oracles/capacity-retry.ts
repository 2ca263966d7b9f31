import type { Expected, PathStep, Reply } from '../path-types.js';
import { thrown, Walk } from './walk.js';
import { ModelPathError } from '../../core/errors.js';

/*
 * What the capacity-retry ladder must do, written from the rules (not from the machine):
 * prepare the summary input for the budget, then ask for the summary. On a context-capacity
 * rejection wait the pause, halve the budget (never below 4 tokens; with an unknown window
 * half the rejected input) and try again, at most maxOverflowRetries times (default 1), and
 * skip a retry whose input does not get smaller. An input that cannot fit fails before any
 * call; an empty summary or any other provider failure ends at once. A complete summary that
 * misses template sections gets one repair request; a complete, non-empty answer to it
 * replaces the first, otherwise (empty, cut off or failed) the first is kept. Either is
 * accepted, and the repair counts as a call.
 */

export interface CapacityRetryRunInput {
  budget: number | null;
  maxOverflowRetries?: number;
  retryBackoffMs?: number;
}

interface Facts {
  budget: number | null;
  attempt: number;
  calls: number;
  repairs: number;
  inputTokens: number;
  rejected: number | null;
  summary: Record<string, unknown> | null;
  failure: Record<string, unknown> | null;
}

const halve = (budget: number | null, rejected: number) => Math.max(Math.floor((budget ?? rejected) / 2), 4);

function prepared(w: Walk<Facts>, r: Reply): void {
  const f = w.facts;
  const failed = thrown(r);
  if (failed) return ((f.failure = { reason: 'budget', message: failed.message }), w.go('failed'));
  const { inputTokens } = (r as { done: { inputTokens: number } }).done;
  if (f.rejected !== null && inputTokens >= f.rejected)
    return ((f.failure = { reason: 'cannot-shrink', inputTokens, budget: f.budget }), w.go('exhausted'));
  f.inputTokens = inputTokens;
  w.go('requesting');
}

function answered(w: Walk<Facts>, r: Reply, retries: number): void {
  const f = w.facts;
  f.calls += 1;
  const failed = thrown(r);
  if (!failed) {
    const summary = (r as { done: Record<string, unknown> }).done;
    if (summary.empty) return ((f.failure = { reason: 'empty-summary' }), w.go('failed'));
    f.summary = summary;
    f.inputTokens = summary.inputTokens as number;
    const complete = summary.finishReason !== 'length';
    return w.go(summary.followsTemplate === false && complete && f.repairs < 1 ? 'repairing' : 'done');
  }
  if (failed.kind !== 'capacity')
    return ((f.failure = { reason: 'provider-error', message: failed.message }), w.go('failed'));
  const rejected = failed.inputTokens ?? f.inputTokens;
  if (f.attempt >= retries)
    return (
      (f.failure = { reason: 'capacity-exhausted', inputTokens: rejected, budget: f.budget }),
      w.go('exhausted')
    );
  f.attempt += 1;
  f.rejected = rejected;
  f.budget = halve(f.budget, rejected);
  w.go('backingOff');
}

/** The repair answer replaces the first summary only when it is complete and not empty. */
function repaired(w: Walk<Facts>, r: Reply): void {
  const f = w.facts;
  f.calls += 1;
  f.repairs += 1;
  const answer = thrown(r) ? null : (r as { done: Record<string, unknown> }).done;
  if (answer && !answer.empty && answer.finishReason !== 'length') {
    f.summary = answer;
    f.inputTokens = answer.inputTokens as number;
  }
  w.go('done');
}

/** The capacity-retry oracle: input and steps → states, calls, output. */
export function capacityRetryOracle(input: unknown, steps: readonly PathStep[]): Expected {
  const given = input as CapacityRetryRunInput;
  const retries = given.maxOverflowRetries ?? 1;
  const w = new Walk<Facts>('preparing', {
    budget: given.budget,
    attempt: 0,
    calls: 0,
    repairs: 0,
    inputTokens: 0,
    rejected: null,
    summary: null,
    failure: null,
  });
  for (const step of steps) {
    if (w.here === 'preparing') prepared(w, w.reply(step, 'prepareSummaryInput'));
    else if (w.here === 'requesting') answered(w, w.reply(step, 'requestSummary'), retries);
    else if (w.here === 'repairing') repaired(w, w.reply(step, 'requestSummary'));
    else if (w.here === 'backingOff') {
      w.wait(step);
      w.go('preparing');
    } else throw new ModelPathError(`the run already ended in ${w.here}`);
  }
  const f = w.facts;
  return w.verdict(
    ['done', 'failed', 'exhausted'],
    {
      status: w.here,
      summaryRefs: w.here === 'done' ? [f.summary!.summaryRef] : [],
      calls: f.calls,
      repairs: f.repairs,
      budget: f.budget,
      truncated: f.summary?.finishReason === 'length',
      followsTemplate: f.summary?.followsTemplate === true || f.repairs > 0,
      failure: f.failure,
    },
    given.retryBackoffMs ?? 0,
  );
}
