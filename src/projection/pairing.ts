import { hasToolCalls, type Message } from '../model/message.js';

/**
 * Call/result pairing analysis shared by normalization (N1–N5) and clearing (C2–C7).
 * One linear pass: each call id keeps a stack of earlier unmatched calls, so a result binds
 * to the most recent earlier unmatched call with its id (N1) in O(1) amortized.
 */

/** One assistant message with tool calls plus the results bound to its calls. */
export interface ToolBatch {
  /** Index of the assistant message (the batch's "originating message order"). */
  readonly assistantIndex: number;
  /** Indices of bound results, in order of appearance (not call order). */
  readonly resultIndices: number[];
  /** Call position bound by each entry of {@link resultIndices}. */
  readonly resultCallPositions: number[];
  /** Per call position: the bound result index, -1 when unmatched, {@link EMPTY_ID_CALL} for a call without id. */
  readonly resultOfCall: number[];
}

/** Marks a call whose id is empty: no result can ever answer it, so a request drops the call. */
export const EMPTY_ID_CALL = -2;

/** Why a message cannot stay where it is in a request (N2). */
export type InvalidReason = 'missing-id' | 'not-tool-role' | 'no-earlier-call' | 'already-answered';

/** Pairing of a whole history. */
export interface Pairing {
  readonly batches: ToolBatch[];
  /** Per message index: index into {@link batches} of the batch it belongs to (assistant or result), else -1. */
  readonly batchOf: Int32Array;
  /** Messages to drop from a request (N2), by index. */
  readonly invalid: Map<number, InvalidReason>;
  /** Number of calls with no bound result (N3). */
  readonly unmatchedCalls: number;
  /** Number of calls with an empty id (unanswerable; dropped from a request). */
  readonly emptyIdCalls: number;
  /** True when every result directly follows its batch (any order) and nothing is invalid or unmatched. */
  readonly valid: boolean;
}

/** Analyzes call/result pairing of a history (N1, N2). Pure and linear in the history length. */
export function analyzePairing(history: readonly Message[]): Pairing {
  const batches: ToolBatch[] = [];
  const batchOf = new Int32Array(history.length).fill(-1);
  const invalid = new Map<number, InvalidReason>();
  // id → stack of [batch, call position] still waiting for a result.
  const open = new Map<string, Array<[number, number]>>();
  let unmatchedCalls = 0;
  let emptyIdCalls = 0;

  for (let i = 0; i < history.length; i++) {
    const m = history[i];
    if (hasToolCalls(m)) {
      const b = batches.length;
      batches.push({
        assistantIndex: i,
        resultIndices: [],
        resultCallPositions: [],
        resultOfCall: m.toolCalls.map((c) => (c.id === '' ? EMPTY_ID_CALL : -1)),
      });
      batchOf[i] = b;
      m.toolCalls.forEach((call, pos) => {
        if (call.id === '') {
          emptyIdCalls++;
          return;
        }
        unmatchedCalls++;
        const stack = open.get(call.id);
        if (stack) stack.push([b, pos]);
        else open.set(call.id, [[b, pos]]);
      });
      continue;
    }
    if (m.role !== 'tool' && m.toolCallId === undefined) continue;
    const id = m.toolCallId;
    if (id === undefined || id === '') invalid.set(i, 'missing-id');
    else if (m.role !== 'tool') invalid.set(i, 'not-tool-role');
    else {
      const stack = open.get(id);
      const top = stack?.pop();
      if (!top) invalid.set(i, stack ? 'already-answered' : 'no-earlier-call');
      else {
        const [b, pos] = top;
        const batch = batches[b];
        batch.resultIndices.push(i);
        batch.resultCallPositions.push(pos);
        batch.resultOfCall[pos] = i;
        batchOf[i] = b;
        unmatchedCalls--;
      }
    }
  }

  let valid = invalid.size === 0 && unmatchedCalls === 0 && emptyIdCalls === 0;
  for (let b = 0; valid && b < batches.length; b++) {
    const { assistantIndex, resultIndices } = batches[b];
    for (let k = 0; k < resultIndices.length; k++)
      if (resultIndices[k] !== assistantIndex + 1 + k) {
        valid = false;
        break;
      }
  }
  return { batches, batchOf, invalid, unmatchedCalls, emptyIdCalls, valid };
}
