import type { Estimator } from '../estimate/estimator.js';
import { MESSAGE_OVERHEAD } from '../estimate/estimator.js';
import { hasToolCalls, msg, textOf, type Message } from '../messages/message.js';
import { headWithinTokens } from './preview.js';
import { isSummaryMessage } from './summary-message.js';
import { cutMessageNote, cutOriginOf } from '../projection/recall-ids.js';

/** Options of {@link collectRetainedMessages}. */
export interface RetentionOptions {
  /** At most this many messages (VT Code default 4; 0 keeps nothing). */
  maxMessages: number;
  /** At most this many tokens (VT Code default 20,000, bounded by the output budget). */
  maxTokens: number;
  estimator: Estimator;
}

const CRITICAL = ['error', 'failed', 'failure', 'panic', 'bug', 'broken', 'regression'];
const CORRECTION = ['no,', 'wrong', 'actually', 'fix', 'instead', 'should be', "don't"];

/** VT Code's importance of a user message: errors > corrections > the rest. */
export function userImportance(text: string): number {
  const t = text.toLowerCase();
  if (CRITICAL.some((w) => t.includes(w))) return 3;
  if (CORRECTION.some((w) => t.includes(w))) return 2.5;
  return 1;
}

/** Phase 2 importance: tool results 2, plain assistant text 1, assistant calls 0.5, the rest 0. */
function otherImportance(m: Message): number {
  const hasText = textOf(m.content).trim() !== '';
  if (m.role === 'tool') return hasText ? 2 : 0;
  if (m.role !== 'assistant') return 0;
  if (hasToolCalls(m)) return 0.5;
  return hasText ? 1 : 0;
}

interface Candidate {
  index: number;
  score: number;
}

/**
 * Retained messages of a rebuilt history (VT Code's retention scoring), chosen from the history
 * before the continuity tail, returned in history order.
 *
 * Phase 1 scores non-empty user messages by importance + recency (`index / total`) and
 * takes them best-first while they fit; the first that does not fit is cut to what is
 * left (as a fresh plain user message) and selection stops. Phase 2, if count and tokens
 * remain, adds tool results (2.0), plain assistant text (1.0) and assistant calls (0.5),
 * skipping those that do not fit. Coherence then keeps the whole answer run of every
 * retained batch and drops results whose batch was not retained. Unlike VT Code, orphan
 * results and batches left without all their results are dropped too, so the rebuilt
 * history is always protocol-valid.
 */
export function collectRetainedMessages(history: readonly Message[], options: RetentionOptions): Message[] {
  const { maxMessages, maxTokens, estimator: est } = options;
  if (maxMessages <= 0 || maxTokens <= 0 || history.length === 0) return [];
  const total = history.length;
  const chosen = new Map<number, Message>();
  let left = maxTokens;

  const users: Candidate[] = [];
  history.forEach((m, index) => {
    const text = textOf(m.content);
    // An earlier summary is carried forward inside the new one, never kept beside it.
    if (m.role === 'user' && text.trim() !== '' && !isSummaryMessage(m))
      users.push({ index, score: userImportance(text) + index / total });
  });
  users.sort((a, b) => b.score - a.score || b.index - a.index);
  let stopped = false;
  for (const c of users) {
    if (chosen.size >= maxMessages) break;
    const tokens = est.message(history[c.index]);
    if (tokens <= left) {
      chosen.set(c.index, history[c.index]);
      left -= tokens;
      continue;
    }
    if (left > MESSAGE_OVERHEAD) {
      const m = cutToFit(history[c.index], left, est);
      if (m !== null) {
        chosen.set(c.index, m);
        left -= est.message(m);
      }
    }
    stopped = true;
    break;
  }

  if (!stopped && chosen.size < maxMessages && left > 0) {
    const others: Candidate[] = [];
    history.forEach((m, index) => {
      const importance = otherImportance(m);
      if (importance > 0) others.push({ index, score: importance + index / total });
    });
    others.sort((a, b) => b.score - a.score || b.index - a.index);
    for (const c of others) {
      if (chosen.size >= maxMessages) break;
      const tokens = est.message(history[c.index]);
      if (tokens > left) continue;
      chosen.set(c.index, history[c.index]);
      left -= tokens;
    }
  }
  return coherent(history, chosen);
}

/**
 * The start of a user message within `room` tokens, as a fresh plain user message that ends by
 * naming the original's recall id (so the cut part is one recall away); only the start when
 * the note itself does not fit. Null when not even a start fits.
 */
function cutToFit(original: Message, room: number, est: Estimator): Message | null {
  const { text, totalTokens, recallId } = cutOriginOf(original, est.message(original));
  const note = cutMessageNote(totalTokens, recallId, 'its start is');
  const head = headWithinTokens(text, room - MESSAGE_OVERHEAD - est.text(note), est);
  if (head.length > 0) {
    const noted = msg.user(head + note);
    if (est.message(noted) <= room) return noted;
  }
  const bare = headWithinTokens(text, room - MESSAGE_OVERHEAD, est);
  return bare.length > 0 ? msg.user(bare) : null;
}

/** Applies call/result coherence to a selection (see {@link collectRetainedMessages}). */
function coherent(history: readonly Message[], chosen: Map<number, Message>): Message[] {
  const out: Message[] = [];
  const indices = [...chosen.keys()].sort((a, b) => a - b);
  const taken = new Set<number>();
  for (const i of indices) {
    if (taken.has(i)) continue;
    const m = history[i];
    if (m.role === 'tool') continue; // kept only through its batch below
    if (!hasToolCalls(m)) {
      out.push(chosen.get(i)!);
      continue;
    }
    let end = i + 1;
    while (end < history.length && history[end].role === 'tool') end++;
    const run = history.slice(i + 1, end);
    const answered = new Set(run.map((r) => r.toolCallId));
    if (m.toolCalls.every((c) => answered.has(c.id)) && run.length === m.toolCalls.length) {
      out.push(m, ...run);
      for (let k = i; k < end; k++) taken.add(k);
    }
  }
  // Results retained on their own come back only with a retained batch; if their batch
  // was chosen too, they are already in `out`.
  return out;
}
