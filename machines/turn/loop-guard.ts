import type { LoopGuardPolicy, LoopGuardReason, LoopGuardState, TurnDecision } from './turn.types.js';

/** Which loop or thrash guard, if any, stops an automatic pass now. Guards are checked in this order. */
export function loopGuardReason(state: LoopGuardState, policy: LoopGuardPolicy): LoopGuardReason | null {
  if (state.consecutiveFailures >= policy.maxConsecutiveFailures) return 'repeated-failures';
  if (state.lastFreedRatio !== null && state.lastFreedRatio < policy.minFreedRatio) return 'ineffective-pass';
  return null;
}

/**
 * The guard memory for the next turn. A compacted pass resets failures and records the freed
 * share; a failed pass counts a failure; an unchanged pass records zero freed (so the next
 * automatic pass is skipped until a manual one succeeds); other turns only age the last pass.
 */
export function nextLoopGuardState(
  state: LoopGuardState,
  decision: TurnDecision,
  pressureBefore: number | null,
  pressureAfter: number | null,
): LoopGuardState {
  const aged =
    state.turnsSinceCompaction === null ? null : Math.min(state.turnsSinceCompaction + 1, 1_000_000);
  switch (decision) {
    case 'compacted': {
      const freed =
        pressureBefore !== null && pressureAfter !== null && pressureBefore > 0
          ? Math.max(0, Math.min(1, (pressureBefore - pressureAfter) / pressureBefore))
          : null;
      return { consecutiveFailures: 0, lastFreedRatio: freed, turnsSinceCompaction: 0 };
    }
    case 'failed':
      return {
        ...state,
        consecutiveFailures: Math.min(state.consecutiveFailures + 1, 1_000),
        turnsSinceCompaction: aged,
      };
    case 'unchanged':
      return { ...state, lastFreedRatio: 0, turnsSinceCompaction: aged };
    default:
      return { ...state, turnsSinceCompaction: aged };
  }
}
