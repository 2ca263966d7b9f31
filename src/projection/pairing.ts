import { hasToolCalls, type Message } from '../messages/message.js';
import { appendSeen, ownBatch, pairingStateFor, snapshot, type PairingState } from './pairing-state.js';

/**
 * Call/result pairing analysis shared by normalization and clearing.
 * One linear pass: each call id keeps a stack of earlier unmatched calls, so a result binds
 * to the most recent earlier unmatched call with its id in O(1) amortized. The pass is
 * resumed, not repeated, when a history only grew since the last one (the hot path per turn).
 */

/** One assistant message with tool calls plus the results bound to its calls. */
export interface ToolBatch {
  /** Index of the assistant message (the batch's "originating message order"). */
  readonly assistantIndex: number;
  /** Indices of bound results, in order of appearance (not call order). */
  readonly resultIndices: number[];
  /** Call position bound by each entry of {@link resultIndices}. */
  readonly resultCallPositions: number[];
  /** Per call position: the bound result index, -1 when unmatched, {@link EMPTY_ID_CALL} for an unsendable call. */
  readonly resultOfCall: number[];
}

/** Call positions per batch in the encoded open-call key (batch × CALL_SLOTS + position). */
const CALL_SLOTS = 2 ** 20;

/**
 * Marks a call a request cannot carry: its id is empty (no result can answer it) or repeats an
 * earlier call id of the same batch (providers reject duplicate ids). A request drops the call.
 */
export const EMPTY_ID_CALL = -2;

/** An id's entry in the open-call map once its only call was answered (keys are never negative). */
const ANSWERED = -1;

/** Why a message cannot stay where it is in a request. */
export type InvalidReason = 'missing-id' | 'not-tool-role' | 'no-earlier-call' | 'already-answered';

/** Pairing of a whole history. */
export interface Pairing {
  readonly batches: ToolBatch[];
  /** Per message index: index into {@link batches} of the batch it belongs to (assistant or result), else -1. */
  readonly batchOf: Int32Array;
  /** Messages to drop from a request, by index. */
  readonly invalid: Map<number, InvalidReason>;
  /** Number of calls with no bound result. */
  readonly unmatchedCalls: number;
  /** Number of calls with an empty or in-batch repeated id (dropped from a request; see {@link EMPTY_ID_CALL}). */
  readonly emptyIdCalls: number;
  /** True when every result directly follows its batch (any order) and nothing is invalid or unmatched. */
  readonly valid: boolean;
}

/**
 * Analyzes call/result pairing of a history. Pure and linear in the history length;
 * a history that extends one analyzed before (same message objects, new ones appended: the
 * next turn of a session) is analyzed only from where that pass stopped (see pairing-state.ts).
 */
export function analyzePairing(history: readonly Message[]): Pairing {
  const state = pairingStateFor(history);
  for (let i = state.seen.length; i < history.length; i++) addMessage(state, history[i], i);
  return snapshot(state);
}

/** One step of the pass: message `m` at index `i` joins the analysis. */
function addMessage(state: PairingState, m: Message, i: number): void {
  appendSeen(state, m);
  const { batches, invalid, open } = state;
  if (hasToolCalls(m)) {
    const b = batches.length;
    const resultOfCall = openBatchCalls(m.toolCalls, b, open);
    for (const r of resultOfCall)
      if (r === EMPTY_ID_CALL) state.emptyIdCalls++;
      else state.unmatchedCalls++;
    batches.push({ assistantIndex: i, resultIndices: [], resultCallPositions: [], resultOfCall });
    state.batchOf[i] = b;
    return;
  }
  if (m.role !== 'tool' && m.toolCallId === undefined) return;
  const id = m.toolCallId;
  if (id === undefined || id === '') return void invalid.set(i, 'missing-id');
  if (m.role !== 'tool') return void invalid.set(i, 'not-tool-role');
  const entry = open.get(id);
  let key: number | undefined;
  if (typeof entry === 'number') {
    if (entry !== ANSWERED) {
      key = entry;
      // Keep a marker behind so a second answer reads "already-answered".
      open.set(id, ANSWERED);
    }
  } else key = entry?.pop();
  if (key === undefined)
    return void invalid.set(i, entry !== undefined ? 'already-answered' : 'no-earlier-call');
  const b = Math.floor(key / CALL_SLOTS);
  const pos = key - b * CALL_SLOTS;
  const batch = ownBatch(state, b);
  // Valid only when every batch's results directly follow it (in any call order).
  if (i !== batch.assistantIndex + 1 + batch.resultIndices.length) state.misplacedResults++;
  const owned = batch as { -readonly [K in keyof ToolBatch]: ToolBatch[K] };
  owned.resultIndices = appended(batch.resultIndices, i);
  owned.resultCallPositions = appended(batch.resultCallPositions, pos);
  batch.resultOfCall[pos] = i;
  state.batchOf[i] = b;
  state.unmatchedCalls--;
}

/**
 * `list` with `value` appended. A push grows an array by at least 16 slots, and a long session
 * has tens of thousands of batches with a result or two each (100,000 messages: 14 MB of
 * empty slots), so short lists are copied to their exact length instead.
 */
function appended(list: number[], value: number): number[] {
  if (list.length >= SHORT_LIST) {
    list.push(value);
    return list;
  }
  return list.concat(value);
}

const SHORT_LIST = 16;

/**
 * Registers a batch's calls as open (waiting for a result) under their ids and returns the
 * batch's `resultOfCall`: -1 per open call, {@link EMPTY_ID_CALL} per unsendable one.
 */
function openBatchCalls(
  calls: NonNullable<Message['toolCalls']>,
  b: number,
  open: Map<string, number | number[]>,
): number[] {
  const resultOfCall = new Array<number>(calls.length);
  // Providers reject a batch that repeats a call id, so a repeat is unsendable like an empty id.
  const seen = calls.length > 1 ? new Set<string>() : null;
  for (let pos = 0; pos < calls.length; pos++) {
    const id = calls[pos].id;
    if (id === '' || seen?.has(id)) {
      resultOfCall[pos] = EMPTY_ID_CALL;
      continue;
    }
    seen?.add(id);
    resultOfCall[pos] = -1;
    const key = b * CALL_SLOTS + pos;
    const prev = open.get(id);
    if (prev === undefined || prev === ANSWERED) open.set(id, key);
    else if (typeof prev === 'number') open.set(id, [prev, key]);
    else prev.push(key);
  }
  return resultOfCall;
}
