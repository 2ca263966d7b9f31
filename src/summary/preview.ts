import type { Estimator } from '../estimate/estimator.js';
import { MESSAGE_OVERHEAD } from '../estimate/estimator.js';
import { headUnits, tailFrom } from '../core/text.js';
import { textOf, type Message } from '../messages/message.js';
import { restrictionSentences } from './offline/user-text.js';

/**
 * Token-bounded previews of text and messages. Only the estimator's `text`
 * is used, so previews work with any counter (tiktoken or the chars fallback).
 */

// A first guess of how many characters hold N tokens; searches widen it when wrong.
const CHARS_PER_TOKEN_GUESS = 8;

/** Largest `k` in [0, hi] with `fits(k)`, given `fits` is monotone and `fits(0)`. */
function largestFitting(hi: number, fits: (k: number) => boolean): number {
  let lo = 0;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The longest prefix of `text` estimated at most `maxTokens` tokens (a clean head cut). */
export function headWithinTokens(text: string, maxTokens: number, est: Estimator): string {
  if (maxTokens <= 0) return '';
  if (est.text(text) <= maxTokens) return text;
  // Widen the search window until it holds more than maxTokens, so huge outputs are never
  // re-tokenized whole on every probe.
  let window = Math.min(text.length, maxTokens * CHARS_PER_TOKEN_GUESS);
  while (window < text.length && est.text(text.slice(0, window)) <= maxTokens)
    window = Math.min(text.length, window * 2);
  const n = largestFitting(window, (k) => est.text(text.slice(0, k)) <= maxTokens);
  return headUnits(text, n);
}

/**
 * The longest suffix of `text` estimated at most `maxTokens` tokens, starting at or after
 * `from`. A long remainder is never counted whole: its slice is a new string the estimator
 * has not seen, so a 50 MB tool result was tokenized again for every preview of it; the
 * window search below finds the same suffix from short slices.
 */
export function tailWithinTokens(text: string, maxTokens: number, est: Estimator, from = 0): string {
  if (maxTokens <= 0) return '';
  const length = text.length - from;
  const suffix = (k: number): string => text.slice(text.length - k);
  const guess = maxTokens * CHARS_PER_TOKEN_GUESS;
  if (from === 0 && est.text(text) <= maxTokens) return text;
  let window = Math.min(length, guess);
  while (window < length && est.text(suffix(window)) <= maxTokens) window = Math.min(length, window * 2);
  // The whole remainder is counted only when the search reached it (it is then short).
  if (from > 0 && window === length && est.text(suffix(length)) <= maxTokens) return suffix(length);
  const n = largestFitting(window, (k) => est.text(suffix(k)) <= maxTokens);
  return n === length ? suffix(length) : tailFrom(text, text.length - n);
}

/** The marker placed where a preview elides the middle of a text. */
export function elisionMarker(elidedTokens: number): string {
  return `\n[… ${elidedTokens} tokens elided by compactor …]\n`;
}

const MARKER_PATTERN = /\n\[… (\d+) tokens elided by compactor …\]\n/g;

/**
 * What the earlier previews' markers inside `text` stand for beyond their own tokens: a result
 * previewed again after a compaction kept its preview says the whole cut, not only the second.
 * Only the short markers are counted; the text itself never is again.
 */
function earlierCuts(text: string, est: Estimator): number {
  if (!text.includes('tokens elided by compactor')) return 0;
  let extra = 0;
  for (const m of text.matchAll(MARKER_PATTERN)) extra += Number(m[1]) - est.text(m[0]);
  return extra;
}

/** Tokens `text` stood for before any preview: its own, with each marker's cut in place of the marker. */
export function originalTokens(text: string, est: Estimator): number {
  return est.text(text) + earlierCuts(text, est);
}

/**
 * A head + tail preview of `text` within `maxTokens` (estimated), with an elision marker
 * naming how much was cut (counted in the original text when `text` is itself a preview). Text that already fits is returned as is. The head gets two
 * thirds of the room: error tails matter, but the start says what the output was.
 */
export function previewText(text: string, maxTokens: number, est: Estimator): string {
  const total = est.text(text);
  if (total <= maxTokens) return text;
  const marker = elisionMarker(total);
  const room = maxTokens - est.text(marker);
  if (room <= 0) return headWithinTokens(text, maxTokens, est);
  const headBudget = Math.floor((room * 2) / 3);
  const head = headWithinTokens(text, headBudget, est);
  const tail = tailWithinTokens(text, room - est.text(head), est, head.length);
  const cutBetween = (tailPart: string) =>
    Math.max(0, total - est.text(head) - est.text(tailPart)) +
    earlierCuts(text.slice(head.length, text.length - tailPart.length), est);
  let out = head + elisionMarker(cutBetween(tail)) + tail;
  // Token counts are not additive across joins; shave the tail until the whole fits.
  let shave = tail;
  while (est.text(out) > maxTokens && shave.length > 0) {
    const cut = Math.ceil(shave.length / 8);
    shave = tailFrom(shave, cut);
    out = head + elisionMarker(cutBetween(shave)) + shave;
  }
  return est.text(out) <= maxTokens ? out : headWithinTokens(out, maxTokens, est);
}

/** The bare protocol skeleton of a message: role, ids, call names and metadata; no payloads. */
function skeleton(m: Message): Message {
  const out: Message = { role: m.role, content: '' };
  if (m.toolCalls) out.toolCalls = m.toolCalls.map((c) => ({ id: c.id, name: c.name, arguments: '{}' }));
  if (m.toolCallId !== undefined) out.toolCallId = m.toolCallId;
  if (m.toolName !== undefined) out.toolName = m.toolName;
  // Metadata is never sent to providers nor estimated, and it carries exit codes and
  // error flags that the offline summarizer needs, so previews keep it.
  if (m.metadata !== undefined) out.metadata = m.metadata;
  return out;
}

/**
 * A preview of one message within `budget` tokens (VT Code's preview rules):
 * content becomes a head + tail preview, non-text parts, reasoning and opaque details are
 * removed (metadata stays: it is never sent or counted), oversized call arguments become `{}`, thought signatures go.
 * Call ids, tool names and `toolCallId` are always kept, so a preview never breaks the
 * protocol. A message that fits is returned unchanged (same object). The result can still
 * exceed `budget` when the protocol skeleton alone does; callers check aggregates.
 */
export function previewMessage(m: Message, budget: number, est: Estimator): Message {
  if (est.message(m) <= budget) return m;
  const base = skeleton(m);
  let room = budget - est.message(base);
  // A fresh object: the estimator caches messages by identity, so the measured skeleton
  // must not be the object that then receives the payload.
  const out: Message = { ...base };
  if (m.toolCalls && out.toolCalls) {
    out.toolCalls = m.toolCalls.map((c, i) => {
      const kept = { ...out.toolCalls![i] };
      const argTokens = est.text(c.arguments) - est.text('{}');
      // Arguments that fit are kept whole (they are the command actually run); bigger
      // ones would be invalid JSON if cut, so they become `{}`.
      if (argTokens <= room / 2) {
        kept.arguments = c.arguments;
        room -= argTokens;
      }
      if (c.freeformInput !== undefined && room > 8) {
        kept.freeformInput = headWithinTokens(c.freeformInput, Math.min(Math.floor(room / 2), 1024), est);
        room -= est.text(kept.freeformInput);
      }
      return kept;
    });
  }
  const text = textOf(m.content);
  const isUserText = m.role === 'user' && m.toolCallId === undefined;
  if (room > 0 && text.length > 0)
    out.content = isUserText ? previewUserText(text, room, est) : previewText(text, room, est);
  return out;
}

/** The line that opens the user's rules a preview kept from the part it cut. */
export const KEPT_RULES_HEADER = 'Rules the user stated in the cut part:';

/**
 * A preview of a user's message that keeps the rules it states (sentences such as "never …",
 * "always …", "don't …") from the part the preview cuts, newest first within half the room:
 * a summary can only carry the instructions it was shown.
 */
function previewUserText(text: string, maxTokens: number, est: Estimator): string {
  const plain = previewText(text, maxTokens, est);
  if (plain === text) return text;
  const cut = restrictionSentences(text).filter((r) => !plain.includes(r));
  const kept: string[] = [];
  let used = est.text(KEPT_RULES_HEADER) + 2;
  for (const r of [...new Set(cut)].reverse()) {
    const cost = est.text(r) + 2;
    if (used + cost > maxTokens / 2) break;
    used += cost;
    kept.unshift(`- ${r}`);
  }
  if (kept.length === 0) return plain;
  const block = `\n${KEPT_RULES_HEADER}\n${kept.join('\n')}`;
  const withRules = previewText(text, maxTokens - est.text(block) - 1, est) + block;
  return est.text(withRules) <= maxTokens ? withRules : plain;
}

/**
 * Caps every message at the largest common size `c` such that the sum fits (water
 * filling): small messages stay whole, large ones share what is left as previews. A
 * message never shrinks below its protocol skeleton, so the result can exceed `budget`
 * when the skeletons alone do; callers check the aggregate.
 */
export function previewToFit(messages: readonly Message[], budget: number, est: Estimator): Message[] {
  const sizes = messages.map((m) => est.message(m));
  if (sizes.reduce((a, b) => a + b, 0) <= budget) return messages.slice();
  const floors = messages.map((m, i) => Math.min(sizes[i], est.message(previewMessage(m, 0, est))));
  const cost = (c: number): number => sizes.reduce((a, s, i) => a + (s <= c ? s : Math.max(c, floors[i])), 0);
  let lo = MESSAGE_OVERHEAD;
  let hi = Math.max(...sizes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (cost(mid) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return messages.map((m, i) => (sizes[i] > lo ? previewMessage(m, lo, est) : m));
}

/** Estimated tokens of a user message holding `instructions` (how the fork sends them). */
export function instructionsTokens(instructions: string, est: Estimator): number {
  return instructions.length === 0 ? 0 : est.text(instructions) + MESSAGE_OVERHEAD;
}
