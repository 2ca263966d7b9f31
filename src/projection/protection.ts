import type { Message } from '../messages/message.js';
import type { ClearingPolicy } from './clearing-policy.js';
import type { Pairing, ToolBatch } from './pairing.js';

/** Which tool batches clearing must keep (the evidence window and the count rule). */

function isComplete(batch: ToolBatch): boolean {
  return !batch.resultOfCall.includes(-1);
}

export interface EvidenceWindow {
  batches: Uint8Array;
  count: number;
  tokens: number;
  /** Tokens of the first complete batch that did not fit (0 when the walk ran out of batches). */
  stoppedAt: number;
  /** True when the newest complete batch alone exceeds the budget. */
  newestOversized: boolean;
}

/**
 * Evidence window: complete batches newest-first while the running total (inputs + results) stays within
 * budget. Incomplete batches (possible only on un-normalized input) are not walk steps.
 */
export function evidenceWindow(pairing: Pairing, tokens: readonly number[], budget: number): EvidenceWindow {
  const batches = new Uint8Array(pairing.batches.length);
  let running = 0;
  let count = 0;
  let stoppedAt = 0;
  for (let b = pairing.batches.length - 1; b >= 0; b--) {
    const batch = pairing.batches[b];
    if (!isComplete(batch)) continue;
    let cost = tokens[batch.assistantIndex];
    for (const r of batch.resultIndices) cost += tokens[r];
    if (running + cost > budget) {
      stoppedAt = cost;
      break; // stop before the first batch that does not fit; never skip over it
    }
    running += cost;
    batches[b] = 1;
    count++;
  }
  return { batches, count, tokens: running, stoppedAt, newestOversized: count === 0 && stoppedAt > 0 };
}

/**
 * Count rule: the newest `keepToolUses` results, each expanded to its whole batch, plus the newest
 * `keepRecentToolBatches` batches — both by originating (assistant) message order. Results
 * that match no batch count by their own position and protect only themselves.
 */
export function countProtected(
  messages: readonly Message[],
  pairing: Pairing,
  policy: ClearingPolicy,
): { batches: Uint8Array; orphans: Set<number> } {
  const batches = new Uint8Array(pairing.batches.length);
  const orphans = new Set<number>();
  const orphanIdx: number[] = [];
  for (let i = 0; i < messages.length; i++)
    if (messages[i].role === 'tool' && pairing.batchOf[i] < 0) orphanIdx.push(i);

  let b = pairing.batches.length - 1;
  let o = orphanIdx.length - 1;
  for (let kept = 0; kept < policy.keepToolUses && (b >= 0 || o >= 0);) {
    if (o < 0 || (b >= 0 && pairing.batches[b].assistantIndex > orphanIdx[o])) {
      const n = pairing.batches[b].resultIndices.length;
      if (n > 0) {
        batches[b] = 1;
        kept += n;
      }
      b--;
    } else {
      orphans.add(orphanIdx[o--]);
      kept++;
    }
  }
  for (let k = 0, c = pairing.batches.length - 1; k < policy.keepRecentToolBatches && c >= 0; k++, c--)
    batches[c] = 1;
  return { batches, orphans };
}
