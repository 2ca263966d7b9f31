import { textOf, type Message } from '../messages/message.js';
import { isNativeSummary } from '../providers/opaque-items.js';

/**
 * How Compactor marks the summary messages it writes into a rebuilt history, so a
 * later pass recognises them: retention never keeps one beside the new summary, bounding
 * pins the latest into the fork, and the offline summarizer carries it forward.
 */

/** The text every local summary message starts with. */
export const SUMMARY_PREFIX = 'Previous conversation summary:\n';

/** Metadata marking messages Compactor wrote during a rebuild (re-compaction finds them). */
export const SUMMARY_METADATA_KIND = 'compaction-summary';

/** Metadata kind of the re-injected files message a rebuild adds after the summary. */
export const REINJECTION_METADATA_KIND = 'compaction-reinjection';

/** True for the re-injected files message: context Compactor added, not a request of the user. */
export function isReinjectionMessage(m: Message): boolean {
  return m.metadata?.kind === REINJECTION_METADATA_KIND;
}

/** Headers of the two band messages in a hierarchical rebuild. */
export const ABSTRACT_HEADER = 'Earlier context (abstract):\n';
export const DETAIL_HEADER = 'Recent context (summary):\n';

/** Every header a Compactor summary message starts with (flat and both bands). */
export const SUMMARY_HEADERS = [SUMMARY_PREFIX, ABSTRACT_HEADER, DETAIL_HEADER] as const;

/**
 * True for a message written by `summaryMessage` (rebuild.ts) (flat summary or either band), found
 * by its metadata or, when metadata was lost (an export round trip), by its header.
 */
export function isSummaryMessage(m: Message): boolean {
  if (m.metadata?.kind === SUMMARY_METADATA_KIND) return true;
  // A native compaction marker carrying its summary text counts as the latest summary.
  if (isNativeSummary(m)) return textOf(m.content).trim() !== '';
  if (m.role !== 'user') return false;
  const text = textOf(m.content);
  return SUMMARY_HEADERS.some((h) => text.startsWith(h));
}

/** The text of a summary message without its header (the summary as written). */
export function summaryBody(m: Message): string {
  const text = textOf(m.content);
  const header = SUMMARY_HEADERS.find((h) => text.startsWith(h));
  return header ? text.slice(header.length) : text;
}
