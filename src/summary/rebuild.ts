import type { Estimator } from '../estimate/estimator.js';
import { msg, type Message } from '../messages/message.js';
import { EmptySummaryError } from '../core/errors.js';
import { splitContinuityTail } from './continuity.js';
import { boundCompactedHistory, compactedHistoryBudget } from './output-bound.js';
import { collectRetainedMessages } from './retention.js';
import { SUMMARY_METADATA_KIND, SUMMARY_PREFIX } from './summary-message.js';

export { isSummaryMessage, SUMMARY_PREFIX } from './summary-message.js';

/** VT Code defaults for retained messages. */
export const DEFAULT_RETAINED_MESSAGES = 4;
export const DEFAULT_RETAINED_TOKENS = 20_000;

/** Options of {@link rebuildHistory}. */
export interface RebuildOptions {
  estimator: Estimator;
  /** Continuity tail target: `min(20,000, window × retainRatio)`, floor 1,024 (from `resolveBudgets`). */
  continuityTailTokens: number;
  /** Usable context window; `null` = unknown (no output bounding). */
  capacity: number | null;
  /** Output tokens reserved for the next request (default 0). */
  reservedOutput?: number;
  /** Frozen system prompt + tool schema tokens of the next request (default 0). */
  prefixTokens?: number;
  /** Maximum retained messages (default 4; 0 disables retention). */
  retainedUserMessages?: number;
  /** Token cap for retained messages (default 20,000; also bounded by the output budget). */
  retainedTokens?: number;
}

/** A rebuilt history and what went into it (item counts for the report, diagnostics). */
export interface RebuiltHistory {
  history: Message[];
  /** Estimated tokens of `history`. */
  tokens: number;
  /** Messages between the summary and the tail. */
  retainedCount: number;
  /** Messages in the continuity tail. */
  tailCount: number;
  /** The output budget applied (`null` = unknown window). */
  budget: number | null;
  /** Whether output bounding had to preview or drop anything. */
  bounded: boolean;
  /** False only when even the protocol skeletons exceed the budget. */
  fits: boolean;
}

/**
 * A summary as the user message that opens a rebuilt history. Throws
 * {@link EmptySummaryError} for blank text (never an empty "Previous conversation
 * summary").
 */
export function summaryMessage(text: string, header = SUMMARY_PREFIX): Message {
  const body = text.trim();
  if (body === '') throw new EmptySummaryError({ provider: 'unknown', model: 'unknown' });
  return msg.user(`${header}${body}`, { metadata: { kind: SUMMARY_METADATA_KIND } });
}

/**
 * Rebuilds live history after a local summary: the summary as a user message
 * ("Previous conversation summary:\n…"), the retained messages (retention scoring over
 * the history before the tail), and the continuity tail of whole protocol groups or
 * batches; then bounds the result to the context (output bounding). Works from the
 * ORIGINAL history, not the pruned fork. Native results never come here (they are
 * canonical as returned). The output is protocol-valid whenever the input is.
 */
export function rebuildHistory(
  history: readonly Message[],
  summaryText: string,
  options: RebuildOptions,
): RebuiltHistory {
  const lead = [summaryMessage(summaryText)];
  const split = splitContinuityTail(history, options.continuityTailTokens, options.estimator);
  return assembleRebuilt(lead, split.before, split.tail, options);
}

/**
 * Shared assembly of a rebuilt history: `lead` (summary messages), messages retained from
 * `retainFrom` (the part before the tail, so nothing is duplicated), then `tail`, output-
 * bounded. Exported for the hierarchical rebuild.
 */
export function assembleRebuilt(
  lead: Message[],
  retainFrom: readonly Message[],
  tail: Message[],
  options: RebuildOptions,
): RebuiltHistory {
  const est = options.estimator;
  const budget = compactedHistoryBudget(options.capacity, options.reservedOutput, options.prefixTokens);
  const retainedCap = Math.min(
    options.retainedTokens ?? DEFAULT_RETAINED_TOKENS,
    budget === null ? Infinity : Math.max(budget - est.history(tail) - est.history(lead), 0),
  );
  const retained = collectRetainedMessages(retainFrom, {
    maxMessages: options.retainedUserMessages ?? DEFAULT_RETAINED_MESSAGES,
    maxTokens: retainedCap,
    estimator: est,
  });
  const unbounded = [...lead, ...retained, ...tail];
  // Output bounding caps the first lead message (the summary); any further lead messages
  // and the retained ones are walked as units after it.
  const bounded = boundCompactedHistory(unbounded, lead.length + retained.length, budget, est);
  const tokens = est.history(bounded);
  const changed = bounded.length !== unbounded.length || bounded.some((m, i) => m !== unbounded[i]);
  return {
    history: bounded,
    tokens,
    retainedCount: Math.max(bounded.length - tail.length - lead.length, 0),
    tailCount: tail.length,
    budget,
    bounded: changed,
    fits: budget === null || tokens <= budget,
  };
}
