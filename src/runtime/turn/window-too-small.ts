import { isFixedPartTooLarge, type FixedPart } from '../../../machines/index.js';
import { WindowTooSmallError } from '../../core/errors.js';
import { reservedOutputOf } from '../../projection/budgets.js';
import type { Estimator } from '../../estimate/estimator.js';
import { taskRange, type Message } from '../../messages/message.js';

/**
 * The part of every request built from `history` that no projection can shrink — the system
 * prompt and tool schemas, the task (the user messages that open the conversation) and the room kept for the answer —
 * and the window it must fit. The turn machine decides from it; callers outside a turn check it
 * with {@link checkFixedPartFits}.
 */
export function measureFixedPart(
  history: readonly Message[],
  limits: { prefixTokens?: number; reservedOutput?: number },
  capacity: number | null,
  est: Estimator,
): FixedPart {
  const range = taskRange(history);
  let task = 0;
  if (range !== null) for (let i = range.first; i <= range.last; i++) task += est.message(history[i]);
  return {
    prefix: Math.max(0, limits.prefixTokens ?? 0),
    task,
    reserved: reservedOutputOf(limits),
    capacity,
  };
}

/** Throws {@link WindowTooSmallError} when the fixed part of a request built from `history` exceeds `capacity`. */
export function checkFixedPartFits(
  history: readonly Message[],
  limits: { prefixTokens?: number; reservedOutput?: number },
  capacity: number | null,
  est: Estimator,
): void {
  if (capacity === null) return;
  const parts = measureFixedPart(history, limits, capacity, est);
  if (isFixedPartTooLarge(parts)) throw new WindowTooSmallError(parts, capacity);
}
