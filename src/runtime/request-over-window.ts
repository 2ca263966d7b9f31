import type { LoopGuardReason } from '../../machines/index.js';
import { UserError } from '../core/errors.js';
import type { TurnResult } from './turn-runner-types.js';

const n = (x: number): string => x.toLocaleString('en-US');

/**
 * A turn's next request would not fit the window and nothing may shrink it: the loop guard
 * has paused automatic compaction (§14). Sending it would only earn a provider rejection, so
 * the turn fails fast with one line (exit code 1 in the CLI) naming what to do instead.
 */
export class RequestOverWindowError extends UserError {
  readonly neededTokens: number;
  readonly windowTokens: number;
  constructor(
    needed: number,
    window: number,
    capacity: number | null,
    reserved: number,
    reason: LoopGuardReason | null,
  ) {
    const where = capacity === null ? '' : ` (capacity ${n(capacity)} − ${n(reserved)} reserved for output)`;
    const why = reason ? ` (${reason.replace(/-/g, ' ')})` : '';
    super(
      `the next request needs ${n(needed)} tokens but the window holds ${n(window)}${where}; ` +
        `automatic compaction is paused${why}, so compact manually, raise the capacity or start a new session`,
      1,
    );
    this.name = 'RequestOverWindowError';
    this.neededTokens = needed;
    this.windowTokens = window;
  }
}

/** H4/§14: preflight stays advisory, except that a guarded turn over the window fails fast. */
export function failGuardedOverWindow(
  result: TurnResult,
  capacity: number | null,
  reserved: number,
): TurnResult {
  const a = result.advisory;
  if (result.decision !== 'guarded' || !a?.overBudget || a.budgetTokens === null) return result;
  throw new RequestOverWindowError(a.estimatedTokens, a.budgetTokens, capacity, reserved, result.guardReason);
}
