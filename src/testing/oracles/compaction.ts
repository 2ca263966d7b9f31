import type { Expected, PathStep, Reply } from '../path-types.js';
import { thrown, Walk } from './walk.js';
import { ModelPathError } from '../../core/errors.js';

/*
 * What one compaction pass must do, from the rules: run the route's strategy on the full
 * history; a native strategy whose client the route lacks runs Local instead. NativeStandalone
 * runs the capacity-retry ladder (its own rules judge it): a window it returns is adopted with
 * the history's system messages, and if the ladder ends without one, or adopting fails, the
 * pass falls back to the Local summary; every call the ladder made counts. NativeInline first
 * measures the request: under the compact edit's trigger it is not sent (no call counted) and
 * Local runs; otherwise it falls back to Local when compaction does not fire, the edit is
 * rejected or the request fails. Local
 * with nothing before the kept context is unchanged without a call (a model switch still runs); otherwise it summarizes
 * (flat or two bands), rejects a cut-off, template-less or larger-than-input summary, and
 * rebuilds; then it checks the receipt (what the replaced span must keep) and, when the rebuilt
 * history lacks items, amends the summary with them; either step failing fails the pass. A pass whose new history is not smaller in items or tokens is unchanged; a failed
 * or unchanged pass reports the history untouched.
 */

export interface CompactionRunInput {
  strategy: 'nativeStandalone' | 'nativeInline' | 'local';
  mode?: string;
  nativeClients?: { standalone: boolean; inline: boolean };
  historyRef: string;
  itemsBefore: number;
  hierarchical?: boolean;
  compactableItems?: number;
  maxOverflowRetries?: number;
  retryBackoffMs?: number;
}

interface Window {
  historyRef: string;
  itemCount: number;
  tokens?: { before: number; after: number };
}

interface Facts {
  strategy: string;
  fallbackReason: string | null;
  summaryCalls: number;
  repairRequests: number;
  nothingToCompact: boolean;
  result: Window | null;
  receipt: { receiptRef: string; items: number; missing: number } | null;
  amended: number;
  failure: Record<string, unknown> | null;
}

/** Enters the Local summary: nothing to compact, two bands or one. */
function toLocal(w: Walk<Facts>, input: CompactionRunInput, reason: string | null): void {
  w.facts.strategy = 'local';
  if (input.strategy !== 'local') w.facts.fallbackReason = reason;
  if (input.compactableItems === 0 && input.mode !== 'modelSwitch') {
    w.facts.nothingToCompact = true;
    return w.go('local.choosingShape', 'unchanged');
  }
  w.go(
    'local.choosingShape',
    input.hierarchical ? 'local.summarizingHierarchically' : 'local.summarizingFlat',
  );
}

/** A new history is in: compacted when it has fewer items or saves tokens. */
function checkShrink(w: Walk<Facts>, input: CompactionRunInput, result: Window | null): void {
  w.facts.result = result;
  const saved = (t: Window['tokens']) => t !== undefined && t.after < t.before;
  const shrank = result !== null && (result.itemCount < input.itemsBefore || saved(result.tokens));
  w.go('checkingShrink', shrank ? 'compacted' : 'unchanged');
}

function standalone(w: Walk<Facts>, input: CompactionRunInput, r: Reply): void {
  const outcome = (r as { done: Record<string, any> }).done;
  w.facts.summaryCalls += outcome.calls as number;
  w.facts.repairRequests += outcome.repairs as number;
  if (outcome.status === 'done') return w.go('adoptingNativeWindow');
  toLocal(w, input, 'standalone-error');
}

function adopted(w: Walk<Facts>, input: CompactionRunInput, r: Reply): void {
  if (thrown(r)) return toLocal(w, input, 'standalone-error');
  checkShrink(w, input, (r as { done: Window }).done);
}

function measured(w: Walk<Facts>, input: CompactionRunInput, r: Reply): void {
  if (thrown(r)) return toLocal(w, input, 'inline-error');
  const size = (r as { done: { inputTokens: number; triggerTokens: number } }).done;
  if (size.inputTokens < size.triggerTokens) return toLocal(w, input, 'below-trigger');
  w.go('nativeInline');
}

function inline(w: Walk<Facts>, input: CompactionRunInput, r: Reply): void {
  const failed = thrown(r);
  const out = failed ? null : (r as { done: { kind: string; reason?: string } & Window }).done;
  w.facts.summaryCalls += 1;
  if (out === null) return toLocal(w, input, 'inline-error');
  if (out.kind === 'fallback') return toLocal(w, input, out.reason ?? null);
  checkShrink(w, input, { historyRef: out.historyRef, itemCount: out.itemCount, tokens: out.tokens });
}

/** The summary's verdict: a bad summary fails the pass before any rebuild. */
function summarized(w: Walk<Facts>, r: Reply): void {
  const outcome = (r as { done: Record<string, any> }).done;
  w.facts.summaryCalls += outcome.calls as number;
  w.facts.repairRequests += outcome.repairs as number;
  if (outcome.status !== 'done') return ((w.facts.failure = outcome.failure), w.go('failed'));
  const rejected = outcome.truncated
    ? 'summary-truncated'
    : outcome.followsTemplate === false
      ? 'summary-template-less'
      : outcome.summaryTokens > outcome.inputTokens
        ? 'summary-larger-than-input'
        : null;
  if (rejected) return ((w.facts.failure = { reason: rejected }), w.go('local.validatingSummary', 'failed'));
  w.go('local.validatingSummary', 'local.rebuildingHistory');
}

function rebuilt(w: Walk<Facts>, r: Reply): void {
  if (thrown(r)) return ((w.facts.failure = { reason: 'rebuild-error' }), w.go('failed'));
  w.facts.result = (r as { done: Window }).done;
  w.go('local.checkingReceipt');
}

function receiptChecked(w: Walk<Facts>, input: CompactionRunInput, r: Reply): void {
  if (thrown(r)) return ((w.facts.failure = { reason: 'rebuild-error' }), w.go('failed'));
  const receipt = (r as { done: { receiptRef: string; items: number; missing: number } }).done;
  w.facts.receipt = receipt;
  if (receipt.missing > 0) return w.go('local.amendingSummary');
  checkShrink(w, input, w.facts.result);
}

function amended(w: Walk<Facts>, input: CompactionRunInput, r: Reply): void {
  if (thrown(r)) return ((w.facts.failure = { reason: 'rebuild-error' }), w.go('failed'));
  w.facts.amended = w.facts.receipt?.missing ?? 0;
  checkShrink(w, input, (r as { done: Window }).done);
}

/** Reads one step where the walk is. */
function step(w: Walk<Facts>, input: CompactionRunInput, s: PathStep): void {
  switch (w.here) {
    case 'nativeStandalone':
      return standalone(w, input, w.reply(s, 'compactStandalone'));
    case 'adoptingNativeWindow':
      return adopted(w, input, w.reply(s, 'adoptNativeWindow'));
    case 'measuringInline':
      return measured(w, input, w.reply(s, 'measureInline'));
    case 'nativeInline':
      return inline(w, input, w.reply(s, 'compactInline'));
    case 'local.summarizingFlat':
      return summarized(w, w.reply(s, 'capacityRetry'));
    case 'local.summarizingHierarchically':
      return summarized(w, w.reply(s, 'hierarchicalSummary'));
    case 'local.rebuildingHistory':
      return rebuilt(w, w.reply(s, 'rebuildHistory'));
    case 'local.checkingReceipt':
      return receiptChecked(w, input, w.reply(s, 'checkReceipt'));
    case 'local.amendingSummary':
      return amended(w, input, w.reply(s, 'amendSummary'));
    default:
      throw new ModelPathError(`the run already ended in ${w.here}`);
  }
}

/** The compaction oracle: input and steps → states, calls, output. */
export function compactionOracle(input: unknown, steps: readonly PathStep[]): Expected {
  const given = input as CompactionRunInput;
  const w = new Walk<Facts>('resolvingStrategy', {
    strategy: given.strategy,
    fallbackReason: null,
    summaryCalls: 0,
    repairRequests: 0,
    nothingToCompact: false,
    result: null,
    receipt: null,
    amended: 0,
    failure: null,
  });
  const clients = given.nativeClients ?? { standalone: true, inline: true };
  const hasClient = given.strategy === 'nativeStandalone' ? clients.standalone : clients.inline;
  if (given.strategy === 'local') toLocal(w, given, null);
  else if (!hasClient) toLocal(w, given, 'no-client');
  else w.go(given.strategy === 'nativeInline' ? 'measuringInline' : given.strategy);
  for (const s of steps) step(w, given, s);
  const f = w.facts;
  const result = w.here === 'compacted' ? f.result : null;
  return w.verdict(
    ['compacted', 'unchanged', 'failed'],
    {
      status: w.here,
      strategy: f.strategy,
      fallbackReason: f.fallbackReason,
      historyRef: result?.historyRef ?? given.historyRef,
      itemsAfter: result?.itemCount ?? given.itemsBefore,
      summaryCalls: f.summaryCalls,
      repairRequests: f.repairRequests,
      nothingToCompact: f.nothingToCompact,
      receiptRef: f.receipt?.receiptRef ?? null,
      receiptItems: f.receipt?.items ?? 0,
      amendedItems: f.amended,
      failure: f.failure,
    },
    0,
  );
}
