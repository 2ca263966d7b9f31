import type { Message } from '../messages/message.js';
import { textStartsWith } from '../messages/held-text.js';
import { completeClearingPolicy, type ClearingPolicy } from './clearing-policy.js';
import { STUB_START } from './stubs.js';

/**
 * Clearing measured against what was sent: a result cleared in the request sent last stays
 * cleared, with the same stub text, so the next request repeats the previous one byte for byte
 * and only adds the new messages. Clearing grows only in the next big step.
 */

/** The call ids of the tool results that `sent` carries as clearing stubs (empty for none). */
export function clearedCallIds(sent: readonly Message[] | null): ReadonlySet<string> {
  const ids = new Set<string>();
  if (sent === null) return ids;
  for (const m of sent) {
    if (m.role !== 'tool' || m.toolCallId === undefined || m.toolCallId === '') continue;
    if (textStartsWith(m, STUB_START)) ids.add(m.toolCallId);
  }
  return ids;
}

/**
 * Clearing in steps (`clearAtLeast` above 0, clearing on): `sticky` says what was sent stays
 * cleared, and `between` is the policy of the requests between steps, which clears nothing
 * new (a step is made when a request must be made to fit, and clears every old result at once).
 */
export function stepwiseClearing(policy: Partial<ClearingPolicy> | undefined): {
  sticky: boolean;
  between: Partial<ClearingPolicy> | undefined;
} {
  const complete = completeClearingPolicy(policy);
  const sticky = complete.enabled && complete.clearAtLeast > 0;
  return { sticky, between: sticky ? { ...policy, clearAtLeast: Number.MAX_SAFE_INTEGER } : policy };
}

/** The `keepCleared` option of a projection: the results `sent` cleared, when clearing is sticky. */
export function keepClearedOf(
  sticky: boolean,
  sent: readonly Message[] | null,
): { keepCleared?: ReadonlySet<string> } {
  return sticky && sent !== null ? { keepCleared: clearedCallIds(sent) } : {};
}
