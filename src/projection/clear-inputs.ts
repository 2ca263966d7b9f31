import type { Estimator } from '../estimate/estimator.js';
import { hasToolCalls, type Message, type ToolCall } from '../messages/message.js';
import type { ClearingPolicy } from './clearing-policy.js';
import type { Pairing } from './pairing.js';
import { clearCallInputs, CLEARED_INPUT_PLACEHOLDER, keepsCallAsIs } from './stubs.js';

// Memoized per (message, cleared positions, mode), so a cleared call keeps its identity across
// requests and the estimator's per-message cache hits (see clear-tool-results.ts). One
// cleared position (the common case) is looked up by number, not by a built string key.
const inputCache = new WeakMap<Message, Map<string | number, Message>>();

/** What clearing the inputs of replaced calls did: calls whose input went, tokens the assistant messages lost. */
export interface ClearedInputs {
  cleared: number;
  savedTokens: number;
}

/**
 * For each replaced result, clear the inputs of exactly the call it answered (not every
 * call sharing its id). An assistant message is never replaced by a costlier one.
 */
export function clearInputsOfReplaced(
  original: readonly Message[],
  out: Message[],
  pairing: Pairing,
  replaced: readonly number[],
  policy: ClearingPolicy,
  est: Estimator,
): ClearedInputs {
  // Call positions per batch, batches in order of their first replaced result. An array by
  // batch, not a Map: this runs on every request over every cleared result (bench hot path).
  const positionsByBatch: number[][] = new Array<number[]>(pairing.batches.length);
  const order: number[] = [];
  for (const i of replaced) {
    const b = pairing.batchOf[i];
    if (b < 0) continue;
    const batch = pairing.batches[b];
    const pos = batch.resultCallPositions[batch.resultIndices.indexOf(i)];
    const list = positionsByBatch[b];
    if (list) list.push(pos);
    else {
      order.push(b);
      positionsByBatch[b] = [pos];
    }
  }
  let cleared = 0;
  let savedTokens = 0;
  for (const b of order) {
    const positions = positionsByBatch[b];
    const a = pairing.batches[b].assistantIndex;
    const m = original[a];
    if (!hasToolCalls(m)) continue;
    const next = inputClearedCall(m, positions, policy.clearToolInputs, est);
    if (next === m) continue;
    out[a] = next;
    savedTokens += est.message(m) - est.message(next);
    for (const pos of positions) if (inputsCleared(m.toolCalls[pos], next.toolCalls?.[pos])) cleared++;
  }
  return { cleared, savedTokens };
}

/**
 * The assistant message with the inputs of the calls at `positions` cleared, unless that
 * would raise its estimate (an estimator may price the placeholder above a padded input):
 * then the inputs stay and only the signatures go, which never costs tokens.
 */
export function inputClearedCall(
  m: Message & { toolCalls: ToolCall[] },
  positions: number[],
  clearInputs: boolean,
  est: Estimator,
): Message {
  const next = memoInputs(m, positions, clearInputs);
  if (next === m || !clearInputs || est.message(next) <= est.message(m)) return next;
  return memoInputs(m, positions, false);
}

function inputsCleared(before: ToolCall, after: ToolCall | undefined): boolean {
  if (!after) return false;
  return (
    (after.arguments === CLEARED_INPUT_PLACEHOLDER && before.arguments !== CLEARED_INPUT_PLACEHOLDER) ||
    (after.freeformInput === CLEARED_INPUT_PLACEHOLDER && before.freeformInput !== CLEARED_INPUT_PLACEHOLDER)
  );
}

function memoInputs(
  m: Message & { toolCalls: ToolCall[] },
  positions: number[],
  clearInputs: boolean,
): Message {
  // Most calls have small inputs and no signature: nothing changes, no lookup needed.
  if (positions.every((pos) => keepsCallAsIs(m.toolCalls[pos], clearInputs))) return m;
  const key =
    positions.length === 1
      ? positions[0] * 2 + (clearInputs ? 1 : 0)
      : `${clearInputs ? 1 : 0}:${positions
          .slice()
          .sort((x, y) => x - y)
          .join(',')}`;
  let byKey = inputCache.get(m);
  const hit = byKey?.get(key);
  if (hit) return hit;
  const wanted = new Set(positions);
  let changed = false;
  const toolCalls = m.toolCalls.map((call, pos) => {
    if (!wanted.has(pos)) return call;
    const next = clearCallInputs(call, clearInputs);
    if (next !== call) changed = true;
    return next;
  });
  const next = changed ? { ...m, toolCalls } : m;
  if (!byKey) inputCache.set(m, (byKey = new Map()));
  byKey.set(key, next);
  return next;
}
