import {
  MAX_FAILURE_MESSAGE_CHARS,
  type CompactionMode,
  type CompactionStrategy,
  type Failure,
} from '../../machines/index.js';
import { redactSecrets } from '../core/redact.js';
import { clip } from '../core/text.js';
import { msg, type Message } from '../messages/message.js';
import type { CompactionReport, SummaryCacheReport, TurnResult } from '../runtime/index.js';
import type { BoundaryInfo } from '../store/index.js';
import type { Receipt } from '../summary/receipt.js';
import type { SummaryWarning } from '../summary/repair.js';
import type { SessionTurnResult } from './session-types.js';

/** Every successful compaction tells the user the prompt cache may be colder next time. */
export const CACHE_NOTE = 'The next request may reuse less of the provider prompt cache.';

/** What `session.compact()` reports (time, mode and item counts on success; a bounded cause on failure). */
export interface SessionCompactionReport {
  status: CompactionReport['status'];
  mode: CompactionMode;
  requestedStrategy: CompactionStrategy;
  /** The strategy that produced the result (Local after an inline fallback). */
  strategy: CompactionStrategy;
  fallbackReason: CompactionReport['fallbackReason'];
  elapsedMs: number;
  /** Context items (messages and opaque provider items, not tokens) before and after. */
  itemsBefore: number;
  itemsAfter: number;
  /** Provider requests of the pass, repair requests included. */
  summaryCalls: number;
  /** Of those, repair requests: a summary missed template sections and was asked for again. */
  repairRequests: number;
  /** The history held nothing a summary could replace, so no provider call was made. */
  nothingToCompact: boolean;
  /** Whether the summary/inline request reused the parent envelope. */
  usedParentContext: boolean;
  /** One user-facing line. */
  message: string;
  /** Cache note on success; null otherwise. */
  cacheNote: string | null;
  /** Bounded, secret-free root cause (no provider JSON body); null on success. */
  rootCause: string | null;
  failure: Failure | null;
  /** After a failed model switch, a note to send with the full history; null otherwise. */
  resumeNote: Message | null;
  /** The recorded boundary when a store is attached and the pass compacted. */
  boundary: BoundaryInfo | null;
  /** One line per summary accepted without every template section (after one repair request). */
  warnings: string[];
  /** The template sections those summaries lack (empty when every summary followed the template). */
  missingSections: string[];
  /**
   * What the replaced span had to keep (latest request, corrections, unresolved errors, paths,
   * commands, ids), where each item landed, tokens before and after; null unless a Local pass compacted.
   */
  receipt: Receipt | null;
  /**
   * How the pass's summary request was built (over the last request sent, or a bounded fork)
   * and the share of its input the provider's prompt cache served; null when no summary was asked for.
   */
  summaryCache: SummaryCacheReport | null;
}

/**
 * Root cause of a failure: one line, secrets removed, anything from the first JSON object or array
 * on cut off (providers' bodies never reach the user twice), at most MAX_FAILURE_MESSAGE_CHARS characters.
 */
export function rootCauseOf(message: string): string {
  let text = redactSecrets(message).replace(/\s+/g, ' ').trim();
  const body = text.search(/[[{]\s*"/);
  if (body >= 0) text = `${text.slice(0, body).trimEnd()} …`;
  return clip(text, MAX_FAILURE_MESSAGE_CHARS);
}

/** Template report fields: the warning lines and the union of missing sections, in template order. */
export function summaryWarningFields(warnings: readonly SummaryWarning[]): {
  warnings: string[];
  missingSections: string[];
} {
  const missing = new Set<string>();
  for (const w of warnings) for (const s of w.missingSections) missing.add(s);
  return { warnings: warnings.map((w) => w.message), missingSections: [...missing] };
}

/** What a pass's Local summarizer tells the report beyond the machine's output. */
export interface SummaryPassSource {
  /** Summaries accepted without every template section. */
  warnings(): readonly SummaryWarning[];
  /** How the pass's summary request was built and the cached share of its calls. */
  summaryCache?(): SummaryCacheReport | null;
}

/** A turn's result as the session reports it: the boundary it recorded and the template warning fields. */
export function sessionTurnResult(
  result: TurnResult,
  boundary: BoundaryInfo | null,
  summarizer: SummaryPassSource,
  /** Whether the turn compacted with a Local summary, the only kind the warnings describe. */
  localSummary: boolean,
): SessionTurnResult {
  return {
    ...result,
    boundary,
    ...summaryWarningFields(localSummary ? summarizer.warnings() : []),
    summaryCache: summarizer.summaryCache?.() ?? null,
  };
}

/** A pass's template warnings when it compacted with a Local summary. */
function summaryPassFields(r: CompactionReport, source: SummaryPassSource | undefined) {
  const local = r.status === 'compacted' && r.strategy === 'local';
  return {
    summaryCalls: r.summaryCalls,
    repairRequests: r.repairRequests,
    receipt: r.receipt,
    summaryCache: source?.summaryCache?.() ?? null,
    ...summaryWarningFields(local ? (source?.warnings() ?? []) : []),
  };
}

/** One clause on the receipt: how many items were checked and how many the summary lacked. */
export function receiptLine(receipt: Receipt | null): string {
  if (receipt === null || receipt.items.length === 0) return '';
  const amended = receipt.amended === 0 ? 'all kept' : `${receipt.amended} added verbatim to the summary`;
  return ` Receipt: ${receipt.items.length} items, ${amended}.`;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** Inputs of {@link describeCompaction} beyond the runtime report. */
export interface DescribeContext {
  usedParentContext: boolean;
  boundary: BoundaryInfo | null;
  /** The model in use after a model switch (for the failure note). */
  model: string;
  previousModel?: string;
  /** The Local summarizer of the pass: its repair requests and template warnings. */
  summarizer?: SummaryPassSource;
}

/** Plain words for a pass that found nothing to compact (no provider call was made). */
export function nothingToCompactLine(items: number): string {
  return `Nothing to compact: all ${items} context items are recent enough to be kept as they are, so no summary was requested.`;
}

function unchangedLine(r: CompactionReport): string {
  return r.nothingToCompact
    ? nothingToCompactLine(r.itemsBefore)
    : `Compaction (${r.mode}) left the history unchanged (${r.itemsBefore} context items).`;
}

/** Turns a runtime {@link CompactionReport} into the user-facing success or failure report. */
export function describeCompaction(r: CompactionReport, ctx: DescribeContext): SessionCompactionReport {
  const base = {
    status: r.status,
    mode: r.mode,
    requestedStrategy: r.requestedStrategy,
    strategy: r.strategy,
    fallbackReason: r.fallbackReason,
    elapsedMs: r.elapsedMs,
    itemsBefore: r.itemsBefore,
    itemsAfter: r.status === 'compacted' ? r.itemsAfter : r.itemsBefore,
    ...summaryPassFields(r, ctx.summarizer),
    nothingToCompact: r.nothingToCompact,
    usedParentContext: ctx.usedParentContext,
    failure: r.failure,
    boundary: ctx.boundary,
  };
  if (r.status === 'compacted')
    return {
      ...base,
      message:
        `Compacted (${r.mode}, ${r.strategy}) in ${seconds(r.elapsedMs)}: ` +
        `${r.itemsBefore} → ${r.itemsAfter} context items.${receiptLine(r.receipt)} ${CACHE_NOTE}`,
      cacheNote: CACHE_NOTE,
      rootCause: null,
      resumeNote: null,
    };
  if (r.status === 'unchanged')
    return {
      ...base,
      message: unchangedLine(r),
      cacheNote: null,
      rootCause: null,
      resumeNote: null,
    };
  const cause = rootCauseOf(r.failure?.message ?? 'unknown failure');
  if (r.mode === 'modelSwitch') {
    const change = ctx.previousModel ? `from ${ctx.previousModel} to ${ctx.model}` : `to ${ctx.model}`;
    return {
      ...base,
      message:
        `The model changed ${change} and compaction failed: ${cause}. ` +
        `The turn continues on the full history (${r.itemsBefore} context items) with a resume note.`,
      cacheNote: null,
      rootCause: cause,
      resumeNote: msg.user(
        `Note: the model changed ${change}. Compacting the conversation for the new model failed, ` +
          'so the full history follows unchanged. Resume the task where it stopped.',
        { metadata: { kind: 'compaction-resume-note' } },
      ),
    };
  }
  return {
    ...base,
    message: `Compaction (${r.mode}) failed; history unchanged (${r.itemsBefore} context items): ${cause}`,
    cacheNote: null,
    rootCause: cause,
    resumeNote: null,
  };
}
