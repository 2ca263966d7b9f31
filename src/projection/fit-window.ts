import type { Estimator } from '../estimate/estimator.js';
import { textOf, type Message } from '../messages/message.js';
import { originalTokens, previewMessage } from '../summary/preview.js';
import type { Limits } from './budgets.js';
import type { ClearingPolicy } from './clearing-policy.js';
import { analyzePairing } from './pairing.js';
import { projectRequest } from './project-request.js';
import { isClearedResultText } from './stubs.js';

/** Inputs of {@link fitToWindow}. */
export interface FitWindowOptions {
  /** Tokens the request's messages may take: the prompt budget less the system prompt and tool schemas. */
  budgetTokens: number;
  limits: Limits;
  policy?: Partial<ClearingPolicy>;
  estimator: Estimator;
  /** Stop after clearing: no previews, nothing left out (clearing instead of a summary pass). */
  clearingOnly?: boolean;
  /** Call ids whose results the request sent last had cleared: they stay cleared. */
  keepCleared?: ReadonlySet<string>;
}

/** A request that fits, and what it took to get there. */
export interface FittedRequest {
  messages: readonly Message[];
  /** Estimated tokens of `messages`. */
  projectedTokens: number;
  /** Tool results replaced by a short stub. */
  clearedResults: number;
  /** Tool results cut to a head + tail preview (the newest can be one of them). */
  previewedResults: number;
  /** Older messages left out whole, a call always with its results. */
  droppedMessages: number;
}

// An evidence window this small holds no batch: only the count rule protects results.
const NO_EVIDENCE_WINDOW = 1e-9;

/**
 * Makes a request fit `budgetTokens` however large its tool results are, in the order that
 * loses least: (1) clear old results by the session's own rules (skipped when the policy clears
 * in steps: a step is then the next one at once), (2) clear every result but
 * the newest call's, (3) cut the largest results to head + tail previews that say how much was
 * cut and that the whole output stays in the session history, (4) leave out the oldest whole
 * exchanges after the task. Pairing stays valid at every step and the first user message (the
 * task, or the summary that restates it) is always kept. The session history is never touched.
 */
export function fitToWindow(history: readonly Message[], opts: FitWindowOptions): FittedRequest {
  const est = opts.estimator;
  const fits = (m: readonly Message[]) => est.history(m) <= opts.budgetTokens;
  const project = (policy: Partial<ClearingPolicy>, limits: Limits = opts.limits) => {
    const p = projectRequest(history, {
      limits,
      policy,
      estimator: est,
      ...(opts.keepCleared !== undefined ? { keepCleared: opts.keepCleared } : {}),
    });
    return { messages: p.messages, cleared: p.diagnostics.clearedResults };
  };

  const done = (
    messages: readonly Message[],
    cleared: number,
    previewed = 0,
    dropped = 0,
  ): FittedRequest => ({
    messages,
    projectedTokens: est.history(messages),
    clearedResults: cleared,
    previewedResults: previewed,
    droppedMessages: dropped,
  });

  // Clearing in steps: one step clears every old result at once, so that many turns fit before the next.
  const inSteps = (opts.policy?.clearAtLeast ?? 0) > 0;
  const own = inSteps ? null : project({ ...opts.policy, enabled: true, clearAtLeast: 0 });
  if (own !== null && fits(own.messages)) return done(own.messages, own.cleared);
  const all = project(
    {
      ...opts.policy,
      enabled: true,
      clearAtLeast: 0,
      keepToolUses: 1,
      keepRecentToolBatches: 0,
      evidenceWindowRatio: NO_EVIDENCE_WINDOW,
    },
    { ...opts.limits, evidenceWindowRatio: NO_EVIDENCE_WINDOW },
  );
  if (opts.clearingOnly || fits(all.messages)) return done(all.messages, all.cleared);
  const previewed = previewLargestResults(all.messages, opts.budgetTokens, est);
  if (fits(previewed.messages)) return done(previewed.messages, all.cleared, previewed.count);
  const dropped = dropOldest(previewed.messages, opts.budgetTokens, est);
  return done(dropped.messages, all.cleared, previewed.count, dropped.count);
}

/** The note a cut tool result starts with, so the model knows it saw only part of it. */
export function cutResultNote(totalTokens: number): string {
  return (
    `[compactor: this tool output had about ${totalTokens.toLocaleString('en-US')} tokens, more than the ` +
    'context window holds, so only its start and end are shown. The full output is kept in the session ' +
    'history; run the tool again with a narrower request to see the rest.]\n'
  );
}

/**
 * Caps the tool results at the largest common size that fits (water filling): small results
 * stay whole, large ones become previews with a note saying what was cut.
 */
function previewLargestResults(
  messages: readonly Message[],
  budget: number,
  est: Estimator,
): { messages: readonly Message[]; count: number } {
  // A cleared result is a short stub already: cut, it would become a note about itself.
  const tools = messages.flatMap((m, i) =>
    m.role === 'tool' && !isClearedResultText(textOf(m.content)) ? [i] : [],
  );
  if (tools.length === 0) return { messages, count: 0 };
  const sizes = tools.map((i) => est.message(messages[i]));
  const others = est.history(messages) - sizes.reduce((a, b) => a + b, 0);
  const note = est.text(cutResultNote(1_000_000)) + 2;
  const cost = (cap: number) => sizes.reduce((a, s) => a + (s <= cap ? s : cap), 0);
  let lo = 0;
  let hi = Math.max(...sizes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (others + cost(mid) <= budget) lo = mid;
    else hi = mid - 1;
  }
  const out = messages.slice();
  let count = 0;
  tools.forEach((i, k) => {
    if (sizes[k] <= lo) return;
    out[i] = previewWithNote(messages[i], Math.max(lo - note, 0), sizes[k], est);
    count++;
  });
  return { messages: out, count };
}

function previewWithNote(m: Message, budget: number, size: number, est: Estimator): Message {
  const preview = previewMessage(m, budget, est);
  // A result that is already a preview (kept so by a compaction) says what its original had.
  const text = textOf(m.content);
  const total = size - est.text(text) + originalTokens(text, est);
  return { ...preview, content: cutResultNote(total) + textOf(preview.content) };
}

/**
 * Leaves out the oldest exchanges after the task until the request fits: an assistant message
 * goes with the results of its calls, so no result loses its call. The newest exchange stays,
 * and so does every system message (an agent's instructions sent among its messages).
 */
function dropOldest(
  messages: readonly Message[],
  budget: number,
  est: Estimator,
): { messages: readonly Message[]; count: number } {
  const task = messages.findIndex((m) => m.role === 'user');
  if (task < 0) return { messages, count: 0 };
  const units = exchangesAfter(messages, task);
  let total = est.history(messages);
  let drop = 0;
  let count = 0;
  while (total > budget && drop < units.length - 1) {
    for (const i of units[drop]) total -= est.message(messages[i]);
    count += units[drop].length;
    drop++;
  }
  if (count === 0) return { messages, count: 0 };
  const gone = new Set(units.slice(0, drop).flat());
  return { messages: messages.filter((_, i) => !gone.has(i)), count };
}

/** The messages after `task` grouped so that each call travels with its results. */
function exchangesAfter(messages: readonly Message[], task: number): number[][] {
  const pairing = analyzePairing(messages);
  const units: number[][] = [];
  const unitOfBatch = new Map<number, number[]>();
  for (let i = task + 1; i < messages.length; i++) {
    if (messages[i].role === 'system') continue;
    const b = pairing.batchOf[i];
    if (b >= 0) {
      const unit = unitOfBatch.get(b);
      if (unit) {
        unit.push(i);
        continue;
      }
      const fresh = [i];
      unitOfBatch.set(b, fresh);
      units.push(fresh);
    } else units.push([i]);
  }
  return units;
}
