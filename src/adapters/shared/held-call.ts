import { CancelledError } from '../../core/errors.js';
import type { Message } from '../../messages/message.js';
import type { CompactorSession, SessionTurnResult } from '../../session/index.js';
import type { ConversationCall, ConversationProjection } from './conversations.js';
import { advanceSyncPoint, type SyncPoint } from './sync-point.js';

/** What a held call changes of its conversation's state, and puts back when dropped. */
export interface HeldState extends SyncPoint {
  session: CompactorSession;
  sent?: readonly Message[];
  envelopeKey?: string;
  broken?: boolean;
  chain?: readonly string[];
}

/**
 * Called as a held call's turn is kept: what to save once the turn is durable, and whether that
 * saves a sync point (the store does not tell it, as for a new branch: then the answer waits).
 */
export type KeptPoint = () => { save: () => Promise<void>; saves: boolean };

/** When a held call's projection is settled (and, kept, durable): the conversation's next call waits for it. */
export const settling = new WeakMap<ConversationProjection, Promise<void>>();

/**
 * A held call: its turn runs held, its sync point moves in memory only, and nothing is written
 * until `settle(true)`; `settle(false)` puts the session and the point back as they were.
 */
export async function heldCall(
  state: HeldState,
  call: ConversationCall,
  before: { pending: readonly Message[]; envelopeKey: string | undefined },
  keep: KeptPoint,
  projectionOf: (turn: SessionTurnResult) => ConversationProjection,
): Promise<ConversationProjection> {
  const { session } = state;
  const { synced, lastHash, hashes, chain, sent } = state;
  // A call that changed the envelope leaves it to be set again by the next call.
  const envelopeChanged = state.envelopeKey !== before.envelopeKey;
  const putBack = () => {
    Object.assign(state, { synced, lastHash, hashes, chain, sent });
    if (envelopeChanged) state.envelopeKey = undefined;
  };
  let turn: SessionTurnResult;
  try {
    turn = await session.runTurn({
      pending: before.pending,
      held: true,
      ...(call.signal !== undefined ? { signal: call.signal } : {}),
    });
  } catch (e) {
    putBack();
    throw e;
  }
  if (turn.decision === 'cancelled') {
    putBack();
    throw new CancelledError('the call was cancelled before its request was ready');
  }
  void advanceSyncPoint(state, call.messages, undefined, '');
  state.chain = call.chain?.length === call.messages.length ? call.chain : undefined;
  let settledNow!: () => void;
  const settled = new Promise<void>((resolve) => (settledNow = resolve));
  let done: Promise<void> | undefined;
  const settle = (kept: boolean): Promise<void> => {
    if (done !== undefined) return done;
    const committed = kept ? session.settleTurn(true) : undefined;
    // settleTurn has queued the turn's commit line by now: the point is taken as it is with it.
    const point = kept ? keep() : undefined;
    const stored = committed
      ? committed.then(point!.save).catch((e: unknown) => {
          state.broken = true; // reopened from what the store holds on the next call
          throw e;
        })
      : session.settleTurn(false).then(putBack, (e: unknown) => {
          putBack();
          state.broken = true; // the cut back failed: reopened from what the store holds
          throw e;
        });
    // The answer, and the conversation's next call, wait until the commit line is written (a
    // killed process keeps the turn); the fsync ends behind it, before the store's next write.
    // A summary is paid for, and a new branch's point must name it: durable before the answer.
    const paid = turn.compaction !== null || turn.summaryCalls > 0;
    const written = point && !paid && !point.saves ? session.store?.written?.() : undefined;
    done = written ?? stored;
    void stored.catch(() => undefined); // a failed fsync marked the conversation broken
    void done.catch(() => undefined).then(settledNow);
    return done;
  };
  const projection = { ...projectionOf(turn), settle };
  settling.set(projection, settled);
  return projection;
}
