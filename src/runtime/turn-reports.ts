import type { CompactionOutput, TurnOutput } from '../../machines/index.js';
import { WindowTooSmallError } from '../core/errors.js';
import type { MessageStore } from './message-store.js';
import { readReceipt } from './compaction/receipt.implementations.js';
import type { Clock, CompactionReport, TurnResult } from './turn-runner-types.js';

// The machines report store refs and start times; callers get messages and elapsed time.
// Elapsed time never goes below zero, even when a fake clock steps backwards.

/** A compaction pass's machine output as reported to the user (time, mode, item counts or a cause). */
export function toCompactionReport(
  out: CompactionOutput,
  store: MessageStore,
  clock: Clock,
): CompactionReport {
  return {
    status: out.status,
    mode: out.mode,
    requestedStrategy: out.requestedStrategy,
    strategy: out.strategy,
    fallbackReason: out.fallbackReason,
    itemsBefore: out.itemsBefore,
    itemsAfter: out.itemsAfter,
    summaryCalls: out.summaryCalls,
    repairRequests: out.repairRequests,
    receipt:
      out.status === 'compacted' && out.receiptRef !== null ? readReceipt(store, out.receiptRef) : null,
    nothingToCompact: out.nothingToCompact,
    elapsedMs: Math.max(0, clock.now() - out.startedAt),
    failure: out.failure,
    history: store.get(out.historyRef),
  };
}

/**
 * A turn's machine output as reported to the caller (projection, clearing, compaction, loop guard);
 * a turn that ended because the window cannot hold the fixed part of a request becomes the error
 * that says so.
 */
export function toTurnResult(out: TurnOutput, store: MessageStore, clock: Clock): TurnResult {
  if (out.decision === 'window-too-small' && out.fixedPart?.capacity != null)
    throw new WindowTooSmallError(out.fixedPart, out.fixedPart.capacity);
  // The machine's output is the result: only its store references become the messages they name.
  const { historyRef, requestRef, fixedPart: _fixed, startedAt, compaction, ...facts } = out;
  return {
    ...facts,
    elapsedMs: Math.max(0, clock.now() - startedAt),
    compaction: compaction ? toCompactionReport(compaction, store, clock) : null,
    history: store.get(historyRef),
    request: requestRef === null ? null : store.get(requestRef),
  };
}
