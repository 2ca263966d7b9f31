import type { Estimator } from '../estimate/estimator.js';
import { MESSAGE_OVERHEAD } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { BudgetError, NothingToSummarizeError } from '../core/errors.js';
import { previewMessage, previewToFit } from './preview.js';
import { isSummaryMessage } from './summary-message.js';
import {
  completeProtocolPrefix,
  isProtocolValid,
  protocolGroups,
  protocolUnits,
  type Span,
} from './protocol-groups.js';

/** Options of {@link boundHistoryForSummary}. */
export interface BoundOptions {
  /** Allowance for the fork plus the instructions message; `null` = unknown window. */
  budget: number | null;
  /** Estimated tokens of the instructions message (see `instructionsTokens`). */
  instructionsTokens: number;
  estimator: Estimator;
  /** Name of the allowance in a {@link BudgetError} (default "summary input budget"). */
  allowance?: string;
  /**
   * Whether messages before the first user message may be selected (hierarchical bands
   * start mid-conversation). The main fork leaves them out: the system prompt travels as
   * the frozen parent prefix. Always true when the history has no user message at all.
   */
  includeLeading?: boolean;
}

/** How a fork was bounded. */
export type BoundMode = 'verbatim' | 'groups' | 'previews';

/** A protocol-valid summary fork and its measured size. */
export interface BoundedFork {
  messages: Message[];
  /** Estimated tokens of `messages` (the instructions message excluded), i.e. `input_tokens`. */
  inputTokens: number;
  mode: BoundMode;
  /** How many input messages are absent from the fork. */
  omittedMessages: number;
}

const DEFAULT_ALLOWANCE = 'summary input budget';

/** Minimum tokens each message costs however hard it is previewed. */
function minimumTokens(messages: readonly Message[], est: Estimator): number {
  let n = 0;
  for (const m of messages) n += est.message(previewMessage(m, 0, est));
  return n;
}

/** The latest contiguous run of Compactor summary messages (flat, or both bands), if any. */
function latestSummaryRun(history: readonly Message[]): Span | null {
  let end = history.length;
  while (end > 0 && !isSummaryMessage(history[end - 1])) end--;
  if (end === 0) return null;
  let start = end - 1;
  while (start > 0 && isSummaryMessage(history[start - 1])) start--;
  return { start, end };
}

/** Selectable spans, oldest first: user-anchored groups, optionally the leading span. */
function selectableSpans(history: readonly Message[], includeLeading: boolean): Span[] {
  const { leading, groups } = protocolGroups(history);
  const spans = groups.slice();
  if ((includeLeading || groups.length === 0) && leading.end > leading.start) spans.unshift(leading);
  return spans;
}

/** Length of the complete prefix of a span (leading spans need no user anchor). */
function spanPrefix(history: readonly Message[], span: Span): number {
  const slice = history.slice(span.start, span.end);
  return completeProtocolPrefix(slice, history[span.start].role === 'user');
}

/**
 * Smallest room worth filling with previews of a group that does not fit whole: below it a
 * preview is a bare protocol skeleton (ids without content), which tells a summarizer nothing.
 */
export const MIN_PREVIEW_ROOM_TOKENS = 64;

/**
 * Bounds a (pruned) history for the summary fork: complete recent protocol groups OR
 * bounded previews. Walks groups newest-first, taking each complete group whole while it
 * fits; the first group that does not fit whole goes in as bounded previews of what the
 * rest of the allowance can hold (its user anchor and newest batches, extended to older
 * groups while their protocol skeletons fit), and the walk stops there — groups are never
 * skipped over. So a small newest group (a fresh "continue") never leaves the fork holding
 * only itself. An earlier Compactor summary in the history is pinned at the head of the fork
 * (previewed to half the room at most) and only what follows it is bounded, so a second
 * compaction carries it forward instead of losing it. Then checks the aggregate estimate of the fork plus the instructions
 * (per-message overhead and protocol metadata included) against the allowance: an
 * impossible input throws {@link BudgetError} naming the allowance, before any provider call.
 *
 * The result is always protocol-valid (no orphan results, no calls without results): the
 * newest group is cut to its complete prefix, an incomplete older group ends the walk, and
 * previews keep every call with its results and every id. An unknown budget (`null`) keeps
 * the history verbatim when it is already valid (with no known window the first fork is sent as is), else the
 * valid complete groups.
 */
export function boundHistoryForSummary(history: readonly Message[], options: BoundOptions): BoundedFork {
  const est = options.estimator;
  const allowance = options.allowance ?? DEFAULT_ALLOWANCE;
  const spans = selectableSpans(history, options.includeLeading ?? false);
  const finish = (messages: Message[], mode: BoundMode): BoundedFork => ({
    messages,
    inputTokens: est.history(messages),
    mode,
    omittedMessages: history.length - messages.length,
  });

  if (options.budget === null) {
    if (isProtocolValid(history)) return finish(history.slice(), 'verbatim');
    return finish(selectGroups(history, spans, Infinity, est).messages, 'groups');
  }

  const budget = options.budget;
  const room = budget - options.instructionsTokens;
  if (room < MESSAGE_OVERHEAD)
    throw new BudgetError(
      `${allowance} (instructions alone)`,
      options.instructionsTokens + MESSAGE_OVERHEAD,
      budget,
    );

  let out: BoundedFork;
  const pin = latestSummaryRun(history);
  if (isProtocolValid(history) && est.history(history) <= room) out = finish(history.slice(), 'verbatim');
  else if (pin !== null) {
    // The latest earlier summary leads the fork (within half the room), so a second
    // compaction carries it forward; what came after it is bounded in the rest.
    const lead = history.slice(pin.start, pin.end);
    const half = Math.floor(room / 2);
    const pinned = est.history(lead) <= half ? lead : previewToFit(lead, half, est);
    const after = history.slice(pin.end);
    const selected = selectGroups(
      after,
      selectableSpans(after, options.includeLeading ?? false),
      room - est.history(pinned),
      est,
    );
    const previewed = selected.previewed || pinned !== lead;
    out = finish([...pinned, ...selected.messages], previewed ? 'previews' : 'groups');
  } else {
    const selected = selectGroups(history, spans, room, est);
    out = finish(selected.messages, selected.previewed ? 'previews' : 'groups');
  }
  // An empty fork is a budget failure only when some group could have been sent.
  if (out.messages.length === 0 && pin === null && !spans.some((s) => spanPrefix(history, s) > 0))
    throw new NothingToSummarizeError(allowance, history.length, budget);
  const needed = out.inputTokens + options.instructionsTokens;
  if (out.messages.length === 0 || needed > budget)
    throw new BudgetError(allowance, Math.max(needed, options.instructionsTokens + MESSAGE_OVERHEAD), budget);
  return out;
}

/**
 * Complete groups newest-first while they fit whole in `room`; the first that does not fit
 * becomes bounded previews in what is left (see {@link previewFrom}). Oldest-first output.
 */
function selectGroups(
  history: readonly Message[],
  spans: Span[],
  room: number,
  est: Estimator,
): { messages: Message[]; previewed: boolean } {
  const picked: Message[][] = [];
  let used = 0;
  let previewed = false;
  for (let g = spans.length - 1; g >= 0; g--) {
    const span = spans[g];
    const prefix = spanPrefix(history, span);
    const isNewest = g === spans.length - 1;
    if (!isNewest && prefix < span.end - span.start) break;
    if (prefix === 0) {
      if (isNewest) continue;
      break;
    }
    const slice = history.slice(span.start, span.start + prefix);
    const tokens = est.history(slice);
    if (used + tokens <= room) {
      used += tokens;
      picked.push(slice);
      continue;
    }
    // Nothing picked yet means previews are the only option, however small the room.
    const left = room - used;
    if (picked.length === 0 || left >= MIN_PREVIEW_ROOM_TOKENS) {
      const previews = previewToFit(previewFrom(history, spans, g, left, est), left, est);
      // Skeletons over the room: drop the previews, unless they are all there is (the
      // aggregate check then reports the impossible minimum).
      if (picked.length === 0 || est.history(previews) <= left) {
        picked.push(previews);
        previewed = true;
      }
    }
    break;
  }
  return { messages: picked.reverse().flat(), previewed };
}

/**
 * What the previews of group `g` (the first that does not fit whole) cover: its anchor, then
 * its units newest-first, then whole older groups, while their minimum (skeleton) cost stays
 * within half the room, so previews keep some content rather than bare ids. Units are
 * batches with all their results, so a call is never separated from its results.
 */
function previewFrom(
  history: readonly Message[],
  spans: Span[],
  g: number,
  room: number,
  est: Estimator,
): Message[] {
  const span = spans[g];
  const group = history.slice(span.start, span.start + spanPrefix(history, span));
  const limit = Math.max(room / 2, MESSAGE_OVERHEAD);
  const anchor = group[0].role === 'user' ? [group[0]] : [];
  let used = minimumTokens(anchor, est);
  const body = group.slice(anchor.length);
  const units = protocolUnits(body);
  let firstUnit = units.length;
  for (let u = units.length - 1; u >= 0; u--) {
    const cost = minimumTokens(body.slice(units[u].start, units[u].end), est);
    if (used + cost > limit && firstUnit < units.length) break;
    used += cost;
    firstUnit = u;
  }
  const selected = [
    ...anchor,
    ...body.slice(firstUnit < units.length ? units[firstUnit].start : body.length),
  ];
  if (firstUnit > 0) return selected;
  const older: Message[][] = [];
  for (let o = g - 1; o >= 0; o--) {
    const s = spans[o];
    if (spanPrefix(history, s) < s.end - s.start) break;
    const slice = history.slice(s.start, s.end);
    const cost = minimumTokens(slice, est);
    if (used + cost > limit) break;
    used += cost;
    older.push(slice);
  }
  return [...older.reverse().flat(), ...selected];
}
