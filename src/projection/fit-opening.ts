import type { Estimator } from '../estimate/estimator.js';
import { textOf, type Message } from '../messages/message.js';
import { previewMessage } from '../summary/preview.js';
import { isSummaryMessage } from '../summary/summary-message.js';
import { cutMessageNote, cutOriginOf } from './recall-ids.js';

/*
 * Some agents open with long user messages before the user's request: SWE-agent sends a whole
 * demonstration run, Codex its environment. When that opening leaves no room in a small window
 * for the newest exchange and the note naming what was left out, the opening messages before
 * the request give way: each is cut to its start and end with a note naming its recall id, so
 * the whole text stays one recall away. The request itself and a summary are never cut.
 */

/** Cuts are made in steps of this many tokens, so the next requests repeat the same bytes while the newest exchange changes size a little. */
const CUT_STEP = 256;

/** The least a cut opening message keeps of its own text, in tokens: less says nothing. */
const MIN_KEPT = 64;

/** The share of the room the opening leaves for the exchanges and the note once it is cut. */
const WORK_SHARE = 1 / 4;

/**
 * Tokens the opening (`range`, the request included) takes beyond what a cut leaves it: the
 * room less a quarter for the exchanges and the note. It depends on the opening and the room
 * alone, so while they stay the same every request cuts the same bytes and the cache keeps them.
 */
export function openingOverShare(
  messages: readonly Message[],
  range: { first: number; last: number },
  budget: number,
  est: Estimator,
): number {
  return (
    est.history(messages.slice(range.first, range.last + 1)) - (budget - Math.floor(budget * WORK_SHARE))
  );
}

/** The note a cut opening message ends with. */
export function openingCutNote(totalTokens: number, recallId: string): string {
  return cutMessageNote(totalTokens, recallId, 'its start and end are');
}

/** The opening messages before the request that may be cut: user text that is not a summary. */
function cuttable(messages: readonly Message[], range: { first: number; last: number }): number[] {
  const out: number[] = [];
  for (let i = range.first; i < range.last; i++) {
    const m = messages[i];
    if (m.role === 'user' && m.toolCallId === undefined && !isSummaryMessage(m)) out.push(i);
  }
  return out;
}

/**
 * `messages` with the opening messages before the request (`range.last`) cut so that together
 * they take at least `excess` tokens fewer: every one larger than a common size is cut to it
 * (water filling, in steps). Null when nothing needs to go or cutting cannot free that much.
 */
export function cutOpening(
  messages: readonly Message[],
  range: { first: number; last: number },
  excess: number,
  est: Estimator,
): Message[] | null {
  if (excess <= 0) return null;
  const at = cuttable(messages, range);
  const sizes = at.map((i) => est.message(messages[i]));
  const note = est.text(openingCutNote(1_000_000, 'r-00000000')) + 2;
  const floor = note + MIN_KEPT;
  const saved = (cap: number) => sizes.reduce((a, s) => a + (s > cap ? s - cap : 0), 0);
  if (sizes.length === 0 || saved(floor) < excess) return null;
  // The largest common size that frees enough, rounded down to a step.
  let lo = floor;
  let hi = Math.max(...sizes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (saved(mid) >= excess) lo = mid;
    else hi = mid - 1;
  }
  const cap = Math.max(floor, Math.floor(lo / CUT_STEP) * CUT_STEP);
  const out = messages.slice();
  at.forEach((i, k) => {
    if (sizes[k] <= cap) return;
    const m = messages[i];
    const origin = cutOriginOf(m, sizes[k]);
    const preview = previewMessage({ ...m, content: origin.text }, cap - note, est);
    out[i] = {
      ...preview,
      content: textOf(preview.content) + openingCutNote(origin.totalTokens, origin.recallId),
    };
  });
  return out;
}
