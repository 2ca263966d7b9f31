import type { LoopGuardState } from '../../machines/index.js';
import type { CacheHealthMonitor } from './cache-health.js';
import type { CarryLog } from './carry-log.js';
import type { UsageAnchor } from '../estimate/usage-anchor.js';
import type { Message } from '../messages/message.js';
import type { TurnRequestMemo } from './next-request.js';
import type { CacheCarry, TurnCarry } from './session-runner.js';
import type { CompactionToRecord, StoredHistory } from './stored-history.js';

/** What a turn may change in a session's memory, to put back when the turn is not kept. */
export interface SessionMark {
  live: readonly Message[];
  guard: LoopGuardState;
  lastTurn: CacheCarry;
  lastRequest: TurnRequestMemo | undefined;
  sent: readonly Message[] | undefined;
  sentTokens: number | undefined;
  anchor: UsageAnchor | undefined;
  /** How many replaced histories the session held (without a store a compaction adds one). */
  replaced: number;
}

/**
 * A turn run with `held`: its messages and compaction are in memory only, and the store gets
 * them once the caller keeps the turn; dropping it puts the mark back.
 */
export interface HeldTurn {
  mark: SessionMark;
  /** The turn's new messages, for the store. */
  pending: Message[];
  /** The compaction the turn made, for the store. */
  compaction?: CompactionToRecord;
  /** Puts back the checkpoint file the turn replaced. */
  restoreCheckpoint(): Promise<void>;
}

/** A held turn about to run from `mark`. */
export const heldTurn = (mark: SessionMark): HeldTurn => ({
  mark,
  pending: [],
  restoreCheckpoint: async () => undefined,
});

/** Runs a held turn: one that fails or is cancelled puts the mark back, any other waits to be settled. */
export async function holdTurn<R extends { decision: string }>(
  held: HeldTurn,
  turn: () => Promise<R>,
  on: { keep(held: HeldTurn): void; restore(mark: SessionMark): void; done(): void },
): Promise<R> {
  try {
    const result = await turn();
    if (result.decision === 'cancelled') on.restore(held.mark);
    else on.keep(held);
    return result;
  } catch (e) {
    on.restore(held.mark);
    throw e;
  } finally {
    on.done();
  }
}

/**
 * Settles a held turn. Kept, it is written as a turn that was not held writes it (its messages
 * with the carry it started from, then its boundary with the carry after it) and the promise
 * resolves once that is durable; dropped, the mark and the checkpoint file go back.
 */
export async function settleHeld(
  held: HeldTurn,
  kept: boolean,
  to: {
    stored: StoredHistory | null;
    health: CacheHealthMonitor;
    restore(mark: SessionMark): void;
    log: CarryLog;
    /** The session's carry now. */
    carry(): TurnCarry;
  },
): Promise<void> {
  if (!kept) {
    to.restore(held.mark);
    to.log.ended(to.carry(), false);
    return held.restoreCheckpoint();
  }
  if (held.compaction) to.health.onCompaction('compacted');
  const { stored } = to;
  if (!stored) return;
  const start = to.log.startNote({ loopGuard: held.mark.guard, ...held.mark.lastTurn });
  if (held.pending.length > 0 || start !== undefined)
    stored.store.appendMessages(held.pending, start === undefined ? {} : { carry: start });
  stored.commit(held.compaction, to.log.endNote(to.carry()));
  to.log.ended(to.carry(), true);
  await stored.store.flush?.();
}
