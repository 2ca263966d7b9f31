import type { Message } from '../messages/message.js';
import type { InvalidReason, Pairing, ToolBatch } from './pairing.js';

/**
 * The running state of a pairing pass, kept between requests. A session's next request is
 * its last one plus a few messages, so resuming the pass where it stopped makes the per-turn
 * cost follow the new messages instead of the whole history (the bench's speed
 * suite). Like the estimator's cache, this treats messages as immutable values: a message
 * object is never changed in place once it was part of a request.
 */
export interface PairingState {
  /** The messages analyzed so far, in order (compared by identity to resume). */
  readonly seen: Message[];
  readonly batches: ToolBatch[];
  /** Batch per analyzed message, -1 when none; its length is a capacity (≥ `seen.length`). */
  batchOf: Int32Array;
  readonly invalid: Map<number, InvalidReason>;
  /** Call id → the open (batch, call position) key, a stack of them, or ANSWERED. */
  readonly open: Map<string, number | number[]>;
  unmatchedCalls: number;
  emptyIdCalls: number;
  /** Results bound to a batch they do not directly follow. */
  misplacedResults: number;
  /** Batches below this index belong to a Pairing already handed out: copied before they change. */
  shared: number;
  /** Shared batches already copied since the last hand-out. */
  copied: Set<number> | null;
}

/**
 * States by the first message of their history. Two per key, so a history and its repaired
 * copy (which usually start with the same message) do not push each other out.
 */
const states = new WeakMap<Message, PairingState[]>();
const STATES_PER_KEY = 2;

/** A state whose messages are a prefix of `history` (to resume), else a new empty one. */
export function pairingStateFor(history: readonly Message[]): PairingState {
  if (history.length === 0) return newState();
  const kept = states.get(history[0]);
  const hit = kept?.find((s) => isPrefixOf(s.seen, history));
  if (kept && hit) {
    // Most recently used first, so the other slot is the one replaced next.
    if (kept[0] !== hit) {
      kept.splice(kept.indexOf(hit), 1);
      kept.unshift(hit);
    }
    return hit;
  }
  const state = newState();
  if (kept) {
    kept.unshift(state);
    kept.length = Math.min(kept.length, STATES_PER_KEY);
  } else states.set(history[0], [state]);
  return state;
}

function newState(): PairingState {
  return {
    seen: [],
    batches: [],
    batchOf: new Int32Array(0),
    invalid: new Map(),
    open: new Map(),
    unmatchedCalls: 0,
    emptyIdCalls: 0,
    misplacedResults: 0,
    shared: 0,
    copied: null,
  };
}

/** True when `prefix` holds the same message objects as the start of `history`. */
function isPrefixOf(prefix: readonly Message[], history: readonly Message[]): boolean {
  if (prefix.length > history.length) return false;
  for (let i = 0; i < prefix.length; i++) if (prefix[i] !== history[i]) return false;
  return true;
}

/** Records the next analyzed message (its batch not yet known: -1), growing `batchOf` by doubling. */
export function appendSeen(state: PairingState, m: Message): void {
  const i = state.seen.length;
  state.seen.push(m);
  if (i >= state.batchOf.length) {
    const grown = new Int32Array(Math.max(16, state.batchOf.length * 2)).fill(-1);
    grown.set(state.batchOf);
    state.batchOf = grown;
  }
  state.batchOf[i] = -1;
}

/** Batch `b`, copied first when a handed-out Pairing holds it (that Pairing must not change). */
export function ownBatch(state: PairingState, b: number): ToolBatch {
  const batch = state.batches[b];
  if (b >= state.shared || state.copied?.has(b)) return batch;
  const copy: ToolBatch = {
    assistantIndex: batch.assistantIndex,
    resultIndices: batch.resultIndices.slice(),
    resultCallPositions: batch.resultCallPositions.slice(),
    resultOfCall: batch.resultOfCall.slice(),
  };
  state.batches[b] = copy;
  (state.copied ??= new Set()).add(b);
  return copy;
}

/** The Pairing of the messages analyzed so far: its own arrays, so later passes leave it as it is. */
export function snapshot(state: PairingState): Pairing {
  state.shared = state.batches.length;
  state.copied = null;
  const { invalid, unmatchedCalls, emptyIdCalls } = state;
  return {
    batches: state.batches.slice(),
    batchOf: state.batchOf.slice(0, state.seen.length),
    invalid: new Map(invalid),
    unmatchedCalls,
    emptyIdCalls,
    valid: invalid.size === 0 && unmatchedCalls === 0 && emptyIdCalls === 0 && state.misplacedResults === 0,
  };
}
