import { UserError } from '../../core/errors.js';
import type { Estimator } from '../../estimate/estimator.js';
import type { Message } from '../../messages/message.js';

const n = (x: number): string => x.toLocaleString('en-US');

/**
 * The part of every request that no projection can shrink — the system prompt and tool
 * schemas, the task (the first user message) and the room kept for the answer — is larger
 * than the window. It is a configuration problem, so it is raised before any request is sent.
 */
export class WindowTooSmallError extends UserError {
  readonly fixedTokens: number;
  readonly capacityTokens: number;
  constructor(parts: { prefix: number; task: number; reserved: number }, capacity: number) {
    const fixed = parts.prefix + parts.task + parts.reserved;
    super(
      `the context window of ${n(capacity)} tokens cannot hold even the fixed part of a request ` +
        `(${n(fixed)} tokens: system prompt and tool schemas ${n(parts.prefix)}, the task ${n(parts.task)}, ` +
        `reserved for the answer ${n(parts.reserved)}); raise the capacity, lower the reserved output ` +
        'or shorten the system prompt, tools or task',
      2,
    );
    this.name = 'WindowTooSmallError';
    this.fixedTokens = fixed;
    this.capacityTokens = capacity;
  }
}

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
