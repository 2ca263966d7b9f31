import type { Estimator } from '../estimate/estimator.js';
import { hasToolCalls, type Message, type ToolCall } from '../messages/message.js';
import type { ClearingPolicy } from './clearing-policy.js';
import type { Pairing } from './pairing.js';
import { clearCallInputs, CLEARED_INPUT_PLACEHOLDER } from './stubs.js';

// Memoized per (message, cleared positions, mode), so a cleared call keeps its identity across
// requests and the estimator's per-message cache hits (C7; see clear-tool-results.ts).
const inputCache = new WeakMap<Message, Map<string, Message>>();

/**
 * C7: for each replaced result, clear the inputs of exactly the call it answered (not every
 * call sharing its id). An assistant message is never replaced by a costlier one.
 */
export function clearInputsOfReplaced(
  original: readonly Message[],
  out: Message[],
  pairing: Pairing,
  replaced: readonly number[],
  policy: ClearingPolicy,
  est: Estimator,
): number {
  const positionsByBatch = new Map<number, number[]>();
  for (const i of replaced) {
    const b = pairing.batchOf[i];
    if (b < 0) continue;
    const batch = pairing.batches[b];
    const pos = batch.resultCallPositions[batch.resultIndices.indexOf(i)];
    const list = positionsByBatch.get(b);
    if (list) list.push(pos);
    else positionsByBatch.set(b, [pos]);
  }
  let cleared = 0;
  for (const [b, positions] of positionsByBatch) {
    const a = pairing.batches[b].assistantIndex;
    const m = original[a];
    if (!hasToolCalls(m)) continue;
    const next = inputClearedCall(m, positions, policy.clearToolInputs, est);
    if (next === m) continue;
    out[a] = next;
    for (const pos of positions) if (inputsCleared(m.toolCalls[pos], next.toolCalls?.[pos])) cleared++;
  }
  return cleared;
}

/**
 * C7: the assistant message with the inputs of the calls at `positions` cleared, unless that
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
  // Single positions (the common case) skip the copy-and-sort.
  const sorted = positions.length === 1 ? positions : positions.slice().sort((x, y) => x - y);
  const key = `${clearInputs ? 1 : 0}:${sorted.join(',')}`;
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
