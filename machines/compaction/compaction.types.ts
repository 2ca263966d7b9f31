import type { PromiseActorLogic } from 'xstate';
import type { Failure } from '../shared/failure.js';
import type { SummaryOutcome } from '../shared/summary.types.js';

/**
 * Why compaction runs: asked for by the user, automatic past the threshold, recovery after a rejected
 * request, a targeted range, or a model switch. Manual and model switch always summarize.
 */
export type CompactionMode = 'manual' | 'automatic' | 'recovery' | 'targeted' | 'modelSwitch';

/**
 * The three compaction strategies, one per route: the provider's compact endpoint, Anthropic's inline
 * context edits, or a Local summary.
 */
export type CompactionStrategy = 'nativeStandalone' | 'nativeInline' | 'local';

/**
 * Why a native strategy fell back to a Local summary: `inline-error` = the inline request itself
 * failed; `below-trigger` = the history is under the compact edit's trigger, so no inline call
 * was made; `standalone-error` = the standalone endpoint failed (after its capacity retries).
 */
export type InlineFallbackReason =
  | 'no-compaction'
  | 'rejected-edit'
  | 'null-content'
  | 'inline-error'
  | 'below-trigger'
  | 'standalone-error'
  | 'no-client';

/**
 * Which native clients the route has. A native strategy whose client is missing runs the Local
 * summary instead (fallback reason `no-client`), which works everywhere.
 */
export interface NativeClients {
  standalone: boolean;
  inline: boolean;
}

/** Input of one compaction pass. */
export interface CompactionInput {
  turnId: string;
  mode: CompactionMode;
  /** Strategy chosen for the route (native where the provider offers it, else Local). */
  strategy: CompactionStrategy;
  /** Which native clients the route has; absent = both (the machine picks Local for a missing one). */
  nativeClients?: NativeClients;
  /** Ref of the FULL session history, never the projection: compaction summarizes what really happened. */
  historyRef: string;
  /** Context items in that history (the report after a pass shows before/after item counts). */
  itemsBefore: number;
  /** Local only: two bands (abstract of the older part, detail of the newer) instead of one summary. */
  hierarchical?: boolean;
  /** Local summary input budget (window less headroom, frozen prefix and output); null = unknown window. */
  budget: number | null;
  /**
   * Messages a Local pass could replace (those before the kept recent context); 0 = nothing to
   * compact, so the pass ends unchanged without a provider call. Absent: unknown, summarize.
   */
  compactableItems?: number;
  /** Input budget of the first native standalone request (halved on capacity rejections); null = unknown. */
  nativeBudget?: number | null;
  maxOverflowRetries?: number;
  retryBackoffMs?: number;
  /** Clock reading when the pass started; the runtime turns it into the elapsed ms the report shows. */
  startedAt: number;
}

/** A history produced by a strategy, stored by the runtime under `historyRef`. */
export interface CompactedHistory {
  historyRef: string;
  itemCount: number;
  /**
   * Estimated tokens of the history before and after (a long single message summarized into
   * one message keeps the count, not the tokens). Absent: only the item count is known.
   */
  tokens?: { before: number; after: number };
}

/** A new history saves something: fewer items, or fewer estimated tokens. */
export function didShrink(result: CompactedHistory, itemsBefore: number): boolean {
  return (
    result.itemCount < itemsBefore ||
    (result.tokens !== undefined && result.tokens.after < result.tokens.before)
  );
}

/** Input of `compactInline` and `measureInline`. */
export interface NativeCompactInput {
  turnId: string;
  historyRef: string;
}

/**
 * Output of `measureInline`: the inline request's input as it would be sent (bounded history and
 * frozen prefix), and the smallest input the provider's compact edit fires at.
 */
export interface MeasureInlineOutput {
  inputTokens: number;
  triggerTokens: number;
}

/** Input of `adoptNativeWindow`: the standalone endpoint's window, stored under `windowRef`. */
export interface AdoptNativeWindowInput {
  turnId: string;
  historyRef: string;
  windowRef: string;
}

/** Output of `compactInline` (Anthropic's context edits): a compacted window or why to fall back to Local. */
export type CompactInlineOutput =
  | ({ kind: 'compacted' } & CompactedHistory)
  | {
      kind: 'fallback';
      reason: Exclude<InlineFallbackReason, 'inline-error' | 'standalone-error' | 'below-trigger'>;
    };

/** Input of `rebuildHistory`: summary + retained messages + continuity tail. */
export interface RebuildHistoryInput {
  turnId: string;
  historyRef: string;
  /** Flat: one ref; hierarchical: older then newer. */
  summaryRefs: string[];
  mode: CompactionMode;
}

/** Output of `rebuildHistory`. */
export type RebuildHistoryOutput = CompactedHistory;

/** Input of `checkReceipt` and `amendSummary`: the history before and the rebuilt one. */
export interface ReceiptInput {
  turnId: string;
  historyRef: string;
  compactedRef: string;
}

/**
 * Output of `checkReceipt`: how many items the span the summary replaces must keep, and how many
 * of them the rebuilt history lacks; the receipt itself stays in the runtime store.
 */
export interface ReceiptCheck {
  receiptRef: string;
  items: number;
  missing: number;
}

/** Final status of a pass. */
export type CompactionStatus = 'compacted' | 'unchanged' | 'failed';

/** Context: refs, counts and bounded outcome records. */
export interface CompactionContext {
  turnId: string;
  mode: CompactionMode;
  requestedStrategy: CompactionStrategy;
  strategy: CompactionStrategy;
  nativeClients: NativeClients;
  hierarchical: boolean;
  budget: number | null;
  maxOverflowRetries: number | undefined;
  retryBackoffMs: number | undefined;
  historyRef: string;
  itemsBefore: number;
  compactableItems: number | null;
  nativeBudget: number | null;
  nothingToCompact: boolean;
  startedAt: number;
  fallbackReason: InlineFallbackReason | null;
  summary: SummaryOutcome | null;
  summaryCalls: number;
  repairRequests: number;
  result: CompactedHistory | null;
  /** The receipt checked after the rebuild (store ref), its item count and missing items. */
  receiptRef: string | null;
  receiptItems: number;
  receiptMissing: number;
  /** Items added verbatim to the summary by the amend step. */
  amendedItems: number;
  failure: Failure | null;
}

/** No external events: cancellation is the parent stopping this actor. */
export type CompactionEvent = { type: 'compaction.noop' };

/**
 * What a pass reports: time, mode and item counts on success, a bounded cause on failure. On failure
 * or no-op `historyRef` is the untouched input.
 */
export interface CompactionOutput {
  status: CompactionStatus;
  mode: CompactionMode;
  requestedStrategy: CompactionStrategy;
  /** The strategy that produced the result (`local` after an inline fallback). */
  strategy: CompactionStrategy;
  fallbackReason: InlineFallbackReason | null;
  itemsBefore: number;
  itemsAfter: number;
  historyRef: string;
  /** Provider calls spent: native calls plus local summary calls, repair requests included. */
  summaryCalls: number;
  /** Of `summaryCalls`, the repair requests for summaries that missed template sections. */
  repairRequests: number;
  /** The history held nothing a summary could replace: no call was made (status `unchanged`). */
  nothingToCompact: boolean;
  summaryTokens: number;
  /** The receipt of a Local pass (store ref), null when none was checked. */
  receiptRef: string | null;
  /** Items the receipt holds, and how many were added verbatim to the summary. */
  receiptItems: number;
  amendedItems: number;
  startedAt: number;
  failure: Failure | null;
}

/** `measureInline` actor logic. */
export type MeasureInlineLogic = PromiseActorLogic<MeasureInlineOutput, NativeCompactInput>;
/** `adoptNativeWindow` actor logic. */
export type AdoptNativeWindowLogic = PromiseActorLogic<CompactedHistory, AdoptNativeWindowInput>;
/** `compactInline` actor logic. */
export type CompactInlineLogic = PromiseActorLogic<CompactInlineOutput, NativeCompactInput>;
/** `checkReceipt` actor logic. */
export type CheckReceiptLogic = PromiseActorLogic<ReceiptCheck, ReceiptInput>;
/** `amendSummary` actor logic. */
export type AmendSummaryLogic = PromiseActorLogic<CompactedHistory, ReceiptInput & { receiptRef: string }>;
/** `rebuildHistory` actor logic. */
export type RebuildHistoryLogic = PromiseActorLogic<RebuildHistoryOutput, RebuildHistoryInput>;
