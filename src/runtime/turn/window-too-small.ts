import { WindowTooSmallError } from '../../core/errors.js';
import type { Estimator } from '../../estimate/estimator.js';
import type { Message } from '../../messages/message.js';

/** Throws {@link WindowTooSmallError} when the fixed part of a request built from `history` exceeds `capacity`. */
export function checkFixedPartFits(
  history: readonly Message[],
  limits: { prefixTokens?: number; reservedOutput?: number },
  capacity: number | null,
  est: Estimator,
): void {
  if (capacity === null) return;
  const task = history.find((m) => m.role === 'user');
  const parts = {
    prefix: Math.max(0, limits.prefixTokens ?? 0),
    task: task ? est.message(task) : 0,
    reserved: Math.max(0, limits.reservedOutput ?? 0),
  };
  if (parts.prefix + parts.task + parts.reserved > capacity) throw new WindowTooSmallError(parts, capacity);
}
