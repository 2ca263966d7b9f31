import type { Message } from '../../../src/messages/message.js';

/**
 * Shared helper of the re-implemented peer policies: returns `history` with the tool
 * results at `indices` replaced by `replacement(result)` (memoized per original message, so
 * object identity is stable across turns and the estimator cache keeps hitting). Returns
 * the input array itself when nothing is replaced.
 */
export function replaceResults(
  history: readonly Message[],
  indices: Iterable<number>,
  memo: WeakMap<Message, Message>,
  replacement: (result: Message) => Message,
): readonly Message[] {
  let out: Message[] | null = null;
  for (const i of indices) {
    const m = history[i];
    let next = memo.get(m);
    if (!next) memo.set(m, (next = replacement(m)));
    (out ??= history.slice())[i] = next;
  }
  return out ?? history;
}

/** Indices of tool results, oldest first. */
export function toolResultIndices(history: readonly Message[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < history.length; i++) if (history[i].role === 'tool') out.push(i);
  return out;
}
