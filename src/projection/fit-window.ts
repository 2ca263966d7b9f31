import type { Estimator } from '../estimate/estimator.js';
import { taskRange, textOf, type Message } from '../messages/message.js';
import { originalTokens, previewMessage } from '../summary/preview.js';
import type { Limits } from './budgets.js';
import type { ClearingPolicy } from './clearing-policy.js';
import { droppedLineCap, droppedNotes, withNote } from './dropped-pointer.js';
import { cutOpening, openingOverShare } from './fit-opening.js';
import { analyzePairing } from './pairing.js';
import { projectRequest } from './project-request.js';
import { recallIdOf } from './recall-ids.js';
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
 * exchanges after the task, which then names them by recall id. Pairing stays valid at every step and the task (the user messages
 * that open the conversation, or the summary that restates it) is always kept. The session history is never touched.
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
  const dropped = leaveOutOldest(history, previewed.messages, opts.budgetTokens, est);
  return done(dropped.messages, all.cleared, previewed.count, dropped.count);
}

/** The note a cut tool result starts with, so the model knows it saw only part of it. */
export function cutResultNote(totalTokens: number, recallId: string): string {
  return (
    `[compactor: this tool output had about ${totalTokens.toLocaleString('en-US')} tokens, more than the ` +
    'context window holds, so only its start and end are shown. The whole output is kept: recall ' +
    `with id ${recallId} and a range of lines returns any part of it.]\n`
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
  const note = est.text(cutResultNote(1_000_000, 'r-00000000')) + 2;
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
  return { ...preview, content: cutResultNote(total, recallIdOf(m)) + textOf(preview.content) };
}

/**
 * Leaves out the oldest exchanges after the task until the request fits: an assistant message
 * goes with the results of its calls, so no result loses its call. The newest exchange stays,
 * and so does every system message (an agent's instructions sent among its messages), and every
 * user message that opens the conversation (an agent's environment sent before the request). The task
 * then ends with a note naming what was left out by recall id, counted in the budget; its lines
 * depend only on what was left out, so requests that leave out the same messages repeat it.
 * When the opening takes more than three quarters of the room, or not even a short note fits,
 * the opening messages before the request are cut (each naming its own recall id).
 */
export function leaveOutOldest(
  history: readonly Message[],
  messages: readonly Message[],
  budget: number,
  est: Estimator,
): { messages: readonly Message[]; count: number } {
  const range = taskRange(messages);
  if (range === null) return { messages, count: 0 };
  const first = leaveOutFrom(history, messages, range.last, budget, est);
  const excess = Math.max(
    openingOverShare(messages, range, budget, est),
    first.noted ? 0 : first.wholeNoteTokens - budget,
  );
  const cut = cutOpening(messages, range, excess, est);
  if (cut === null) return first;
  const again = leaveOutFrom(history, cut, range.last, budget, est);
  return again.tokens <= budget || first.tokens > budget ? again : first;
}

/**
 * {@link leaveOutOldest} with the task's last message at `task`. `noted` says the request fits
 * and names everything it left out (or left out nothing that needed naming);
 * `wholeNoteTokens` is what the request takes with every exchange but the newest left out and
 * the whole note.
 */
function leaveOutFrom(
  history: readonly Message[],
  messages: readonly Message[],
  task: number,
  budget: number,
  est: Estimator,
): { messages: readonly Message[]; count: number; tokens: number; noted: boolean; wholeNoteTokens: number } {
  const units = exchangesAfter(messages, task);
  const total = est.history(messages);
  const taskTokens = est.message(messages[task]);
  const noteOf = droppedNotes(history);
  // Tokens left after dropping the first d units, for d = 0, 1, …
  const left = [total];
  for (const unit of units)
    left.push(left[left.length - 1] - unit.reduce((a, i) => a + est.message(messages[i]), 0));
  const build = (
    drop: number,
    lines: number | null,
  ): { messages: readonly Message[]; tokens: number; count: number } => {
    const gone = new Set(units.slice(0, drop).flat());
    const kept = messages.filter((_, i) => !gone.has(i));
    const note =
      lines === null
        ? null
        : noteOf(
            messages.filter((_, i) => gone.has(i)),
            lines,
          );
    if (note === null) return { messages: kept, tokens: left[drop], count: gone.size };
    const noted = withNote(messages[task], note);
    return {
      messages: kept.map((m) => (m === messages[task] ? noted : m)),
      tokens: left[drop] - taskTokens + est.message(noted),
      count: gone.size,
    };
  };
  const most = Math.max(0, units.length - 1);
  const cap = droppedLineCap(budget);
  const whole = build(most, cap);
  const result = (r: ReturnType<typeof build>, noted: boolean) => ({
    ...r,
    noted,
    wholeNoteTokens: whole.tokens,
  });
  // The fewest exchanges left out with the whole note; then fewer lines with the most left out;
  // then, when no note fits at all, the fewest left out without one.
  for (let drop = 1; drop <= most; drop++) {
    if (left[drop] > budget) continue;
    const fitted = build(drop, cap);
    if (fitted.tokens <= budget) return result(fitted, true);
  }
  for (let lines = cap - 1; lines >= 0 && most > 0; lines--) {
    const fitted = build(most, lines);
    if (fitted.tokens <= budget) return result(fitted, true);
  }
  let drop = 0;
  while (left[drop] > budget && drop < most) drop++;
  if (drop === 0) return result({ messages, tokens: total, count: 0 }, total <= budget);
  // Left out with no note: what went held tool results (else the first loop had taken it).
  return result(build(drop, null), false);
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
