import { hasToolCalls, type Message } from '../messages/message.js';

/**
 * User-anchored protocol groups and the protocol-validity
 * checks every summary-side selection relies on: a selection is built from whole groups,
 * whole complete prefixes of groups, or whole units, so a call is never separated from
 * its results (a pain point of several peer agents).
 */

/** A half-open index range `[start, end)` into a history. */
export interface Span {
  start: number;
  end: number;
}

/**
 * Splits a history into user-anchored groups: each runs from a user message up to (not
 * including) the next user message. Messages before the first user message belong to no
 * group; `leading` reports them so callers that want them (hierarchical bands) can decide.
 */
export function protocolGroups(history: readonly Message[]): { leading: Span; groups: Span[] } {
  const groups: Span[] = [];
  let firstUser = -1;
  for (let i = 0; i < history.length; i++) {
    if (history[i].role !== 'user') continue;
    if (firstUser < 0) firstUser = i;
    else groups[groups.length - 1].end = i;
    groups.push({ start: i, end: history.length });
  }
  return { leading: { start: 0, end: firstUser < 0 ? history.length : firstUser }, groups };
}

/**
 * Length of the longest protocol-complete prefix of `messages` (relative to its start).
 * Stricter than VT Code's `complete_protocol_group_prefix` in one respect: a tool result
 * with no open batch (an orphan) also cuts the prefix, because our selections must be
 * sendable as they are.
 *
 * - A pending batch interrupted by a non-tool message, or answered by an unknown id, cuts
 *   before the assistant message that opened it.
 * - A batch with an empty or repeated call id cuts at that assistant message.
 * - A batch still open at the end cuts before its assistant message.
 * - With `requireUserAnchor`, a slice that does not start with a user message has prefix 0.
 */
export function completeProtocolPrefix(messages: readonly Message[], requireUserAnchor = true): number {
  if (messages.length === 0) return 0;
  if (requireUserAnchor && messages[0].role !== 'user') return 0;
  let pendingStart = -1;
  const open = new PendingBatch();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'tool') {
      const id = m.toolCallId ?? '';
      if (pendingStart < 0) return i;
      if (id === '' || !open.answer(id)) return pendingStart;
      if (open.left === 0) pendingStart = -1;
      continue;
    }
    if (pendingStart >= 0) return pendingStart;
    if (m.toolCallId !== undefined) return i;
    if (hasToolCalls(m)) {
      if (!open.open(m.toolCalls)) return i;
      pendingStart = i;
    }
  }
  return pendingStart >= 0 ? pendingStart : messages.length;
}

// Batches up to this size are checked by comparing ids pairwise, not with a Set per batch: a
// 100,000-message history has tens of thousands of batches, and their Sets were about 12 MB
// of garbage V8 kept until the process ended.
const SMALL_BATCH = 16;

/** The calls of the pending batch still waiting for their result (one per pass, reused). */
class PendingBatch {
  private calls: readonly { id: string }[] = [];
  private readonly answered = new Uint8Array(SMALL_BATCH);
  private ids: Set<string> | null = null;
  /** Calls not answered yet. */
  left = 0;

  /** Opens a batch; false when a call id is empty or repeats an earlier one of the batch. */
  open(calls: readonly { id: string }[]): boolean {
    this.calls = calls;
    this.left = calls.length;
    this.ids = null;
    if (calls.length > SMALL_BATCH) {
      const ids = new Set<string>();
      for (const c of calls) {
        if (c.id === '' || ids.has(c.id)) return false;
        ids.add(c.id);
      }
      this.ids = ids;
      return true;
    }
    for (let k = 0; k < calls.length; k++) {
      if (calls[k].id === '') return false;
      for (let j = 0; j < k; j++) if (calls[j].id === calls[k].id) return false;
    }
    this.answered.fill(0);
    return true;
  }

  /** Marks the open call with this id answered; false when no open call has it. */
  answer(id: string): boolean {
    if (this.ids) {
      if (!this.ids.delete(id)) return false;
    } else {
      let k = 0;
      while (k < this.calls.length && (this.answered[k] === 1 || this.calls[k].id !== id)) k++;
      if (k === this.calls.length) return false;
      this.answered[k] = 1;
    }
    this.left--;
    return true;
  }
}

/** True when every call is answered right after its batch and no result is orphaned. */
export function isProtocolValid(messages: readonly Message[]): boolean {
  return completeProtocolPrefix(messages, false) === messages.length;
}

/**
 * Splits a protocol-complete slice into units: a batch (assistant with calls plus its
 * results) or a single other message. Units are what tails and previews cut at.
 */
export function protocolUnits(messages: readonly Message[]): Span[] {
  const units: Span[] = [];
  let i = 0;
  while (i < messages.length) {
    let end = i + 1;
    if (hasToolCalls(messages[i])) while (end < messages.length && messages[end].role === 'tool') end++;
    units.push({ start: i, end });
    i = end;
  }
  return units;
}
