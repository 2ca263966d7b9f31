import { hasToolCalls, type Message } from '../messages/message.js';

/**
 * User-anchored protocol groups (SPEC §0, vtcode-notes §1.3) and the protocol-validity
 * checks every summary-side selection relies on: a selection is built from whole groups,
 * whole complete prefixes of groups, or whole units, so a call is never separated from
 * its results (peers.md §4 pain point 4).
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
  let open = new Set<string>();
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'tool') {
      const id = m.toolCallId ?? '';
      if (pendingStart < 0) return i;
      if (id === '' || !open.has(id)) return pendingStart;
      open.delete(id);
      if (open.size === 0) pendingStart = -1;
      continue;
    }
    if (pendingStart >= 0) return pendingStart;
    if (m.toolCallId !== undefined) return i;
    if (hasToolCalls(m)) {
      const ids = new Set<string>();
      for (const c of m.toolCalls) {
        if (c.id === '' || ids.has(c.id)) return i;
        ids.add(c.id);
      }
      pendingStart = i;
      open = ids;
    }
  }
  return pendingStart >= 0 ? pendingStart : messages.length;
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
