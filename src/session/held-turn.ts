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
  /** The turn's new messages, written to the store uncommitted (see {@link writeHeld}). */
  pending: Message[];
  /** The note the write that keeps the turn carries (the carry it starts from), when the log needs one. */
  start?: unknown;
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

/**
 * Adds a held turn's new messages. With a store they are appended without a commit line: loading
 * ignores them until the commit that keeps the turn, and dropping the turn cuts them off again
 * (a server's queued store keeps them in memory until that commit and writes them with it).
 */
export function writeHeld(held: HeldTurn, messages: Message[], stored: StoredHistory | null): void {
  held.pending.push(...messages);
  if (stored && messages.length > 0) stored.store.appendMessages(messages, { commit: false });
}

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
 * Settles a held turn. Kept, its messages (already written) are committed with the carry it
 * started from, then its boundary is written with the carry after it, and the promise resolves
 * once that is durable. Dropped, the mark and the checkpoint file go back, and the log is cut
 * back to its last commit; the promise resolves once the cut is on disk, so the session's next
 * turn starts from a log that holds nothing of this one.
 */
export async function settleHeld(
  held: HeldTurn,
  kept: boolean,
  to: {
    stored: StoredHistory | null;
    health: CacheHealthMonitor;
    /** Puts the mark back (and cuts what the turn wrote off the log). */
    restore(mark: SessionMark): void;
    log: CarryLog;
    /** The session's carry now. */
    carry(): TurnCarry;
  },
): Promise<void> {
  const store = to.stored?.store;
  if (!kept) {
    to.restore(held.mark); // cuts the log back too
    to.log.ended(to.carry(), false);
    await held.restoreCheckpoint();
    return store?.flush?.();
  }
  if (held.compaction) to.health.onCompaction('compacted');
  if (!to.stored || !store) return;
  if (held.pending.length > 0) store.commit(held.start);
  else if (held.start !== undefined) store.appendMessages([], { carry: held.start });
  to.stored.commit(held.compaction, to.log.endNote(to.carry()));
  to.log.ended(to.carry(), true);
  await store.flush?.();
}
