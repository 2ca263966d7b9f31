import type { Estimator } from '../estimate/estimator.js';
import { MESSAGE_OVERHEAD } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { previewMessage, previewToFit } from './preview.js';
import { completeProtocolPrefix, protocolGroups, protocolUnits } from './protocol-groups.js';

/** The history split at the start of its continuity tail. */
export interface ContinuitySplit {
  /** Messages before the tail's first group (retention looks only here: no duplicates). */
  before: Message[];
  /** The tail: a protocol-valid suffix, verbatim where it fits, previews where it must. */
  tail: Message[];
  /** Index in the original history where the tail's first group starts. */
  tailStart: number;
  /**
   * Index in the original history from which the tail keeps messages verbatim (the newest
   * group's user anchor aside). Equal to `tailStart` when the tail is whole groups; later
   * when only the newest batches of an oversized newest group fit. Everything before it is
   * what a summary has to cover (hierarchical bands reach up to here).
   */
  verbatimStart: number;
}

/**
 * Continuity tail (the recent messages kept verbatim): one contiguous suffix of whole user-anchored
 * groups within `targetTokens`, newest first. The newest group is cut to its complete
 * protocol prefix (an unanswered trailing call is left out); an incomplete older group
 * ends the walk. When the newest group alone exceeds the target we keep its user anchor
 * (whole if it takes at most half the target, else a preview of a quarter) plus its newest
 * complete batches that fit — never a call without its results — instead of VT Code's
 * even previews of every message, which leave a long single-task session with nothing
 * readable. No user message means no tail.
 */
export function splitContinuityTail(
  history: readonly Message[],
  targetTokens: number,
  est: Estimator,
): ContinuitySplit {
  const { groups } = protocolGroups(history);
  if (groups.length === 0 || targetTokens <= 0)
    return { before: history.slice(), tail: [], tailStart: history.length, verbatimStart: history.length };
  const newest = groups[groups.length - 1];
  const newestSlice = history.slice(newest.start, newest.end);
  const newestMessages = newestSlice.slice(0, completeProtocolPrefix(newestSlice));
  let used = est.history(newestMessages);

  if (used > targetTokens) {
    const suffix = groupSuffixWithin(newestMessages, targetTokens, est);
    return {
      before: history.slice(0, newest.start),
      tail: suffix.messages,
      tailStart: newest.start,
      verbatimStart: newest.start + suffix.verbatimFrom,
    };
  }
  let start = newest.start;
  const parts: Message[][] = [newestMessages];
  for (let g = groups.length - 2; g >= 0; g--) {
    const slice = history.slice(groups[g].start, groups[g].end);
    if (completeProtocolPrefix(slice) < slice.length) break;
    const tokens = est.history(slice);
    if (used + tokens > targetTokens) break;
    used += tokens;
    parts.unshift(slice);
    start = groups[g].start;
  }
  return { before: history.slice(0, start), tail: parts.flat(), tailStart: start, verbatimStart: start };
}

/**
 * A user anchor plus the newest whole units of a complete group, within `budget`, and the
 * index in `group` from which those units are kept verbatim (`group.length` when even the
 * newest unit had to become previews).
 */
function groupSuffixWithin(
  group: readonly Message[],
  budget: number,
  est: Estimator,
): { messages: Message[]; verbatimFrom: number } {
  const [anchorMessage, ...body] = group;
  const anchorTokens = est.message(anchorMessage);
  const anchor =
    anchorTokens <= budget / 2
      ? anchorMessage
      : previewMessage(anchorMessage, Math.max(Math.floor(budget / 4), MESSAGE_OVERHEAD), est);
  let used = est.message(anchor);
  const units = protocolUnits(body);
  let first = units.length;
  for (let u = units.length - 1; u >= 0; u--) {
    const tokens = est.history(body.slice(units[u].start, units[u].end));
    if (used + tokens > budget) break;
    used += tokens;
    first = u;
  }
  if (first === units.length && units.length > 0) {
    // Not even the newest unit fits whole: keep it as previews in what is left.
    const last = units[units.length - 1];
    return {
      messages: [anchor, ...previewToFit(body.slice(last.start, last.end), Math.max(budget - used, 0), est)],
      verbatimFrom: group.length,
    };
  }
  const from = first < units.length ? units[first].start : body.length;
  return { messages: [anchor, ...body.slice(from)], verbatimFrom: 1 + from };
}
