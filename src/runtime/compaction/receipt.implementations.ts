import { fromPromise } from 'xstate';
import type { CompactedHistory, ReceiptCheck, ReceiptInput } from '../../../machines/index.js';
import {
  amendHistory,
  checkReceipt,
  extractReceiptItems,
  replacedSpan,
  ReceiptSchema,
  type Receipt,
} from '../../summary/receipt.js';
import { isRecallPointer } from '../../projection/stubs.js';
import type { MessageStore } from '../message-store.js';
import { tokensOf, type CompactionDeps } from './compaction-deps.js';

// The receipt of a Local pass: what the replaced span must keep, where each item landed, and
// the amend step that adds the missing items to the summary. Pure work on the store: no calls.

/** The receipt stored under `ref`. */
export function readReceipt(store: MessageStore, ref: string): Receipt {
  return ReceiptSchema.parse(JSON.parse(store.getText(ref)));
}

/** Lists the items of the replaced span and where each landed in the rebuilt history. */
export const checkReceiptActor = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<ReceiptCheck, ReceiptInput>(async ({ input }) => {
    const before = store.get(input.historyRef);
    const after = store.get(input.compactedRef);
    const items = checkReceipt(extractReceiptItems(replacedSpan(before, after)), after, {
      isPointer: deps.isPointer ?? isRecallPointer,
    });
    const receipt: Receipt = {
      items,
      amended: 0,
      tokensBefore: deps.estimator.history(before),
      tokensAfter: deps.estimator.history(after),
    };
    const receiptRef = store.putText(`${input.turnId}:receipt`, JSON.stringify(receipt));
    return { receiptRef, items: items.length, missing: items.filter((i) => i.place === 'missing').length };
  });

/** Adds the missing items verbatim to the summary; the receipt then says they were amended. */
export const amendSummaryActor = (deps: CompactionDeps, store: MessageStore) =>
  fromPromise<CompactedHistory, ReceiptInput & { receiptRef: string }>(async ({ input }) => {
    const before = store.get(input.historyRef);
    const receipt = readReceipt(store, input.receiptRef);
    const missing = receipt.items.filter((i) => i.place === 'missing');
    const next = amendHistory(store.get(input.compactedRef), missing);
    const amended: Receipt = {
      ...receipt,
      items: receipt.items.map((i) => (i.place === 'missing' ? { ...i, place: 'amended' } : i)),
      amended: missing.length,
      tokensAfter: deps.estimator.history(next),
    };
    store.putText(input.receiptRef, JSON.stringify(amended));
    const ref = store.put(`${input.turnId}:history:amended`, next);
    return { historyRef: ref, itemCount: next.length, tokens: tokensOf(deps.estimator, before, next) };
  });
