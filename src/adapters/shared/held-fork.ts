import { rm } from 'node:fs/promises';
import type { CompactorSession } from '../../session/index.js';
import type { ConversationProjection } from './conversations.js';
import { conversationDir } from './sync-point.js';

/** What a fork's settling reads and changes of a conversation's state. */
export interface ForkState<S> {
  session: CompactorSession;
  branch: number;
  /** Calls queued or running on it. */
  active: number;
  /** The branch it left, open until a held call on it is kept. */
  forkedFrom?: S;
}

/**
 * A held call on a fork its rewritten list made: kept, the fork is the conversation's branch
 * from then on and the old one closes; failed or dropped, the old branch is the conversation's
 * again and nothing of the fork is left (its store directory removed), unless another call
 * waits on the fork already (that call settles it).
 */
export async function heldFork<S extends ForkState<S>>(
  run: Promise<ConversationProjection>,
  states: Map<string, S>,
  id: string,
  fork: S,
  sessionDir: string | undefined,
): Promise<ConversationProjection> {
  const undo = async () => {
    const old = fork.forkedFrom;
    if (old === undefined || fork.active > 1) return;
    fork.forkedFrom = undefined;
    if (states.get(id) === fork) {
      states.delete(id);
      states.set(id, old);
    }
    await fork.session.store?.flush?.().catch(() => undefined);
    fork.session.close();
    if (sessionDir !== undefined && fork.branch !== old.branch)
      await rm(conversationDir(sessionDir, id, fork.branch)!, { recursive: true, force: true });
  };
  let projection: ConversationProjection;
  try {
    projection = await run;
  } catch (e) {
    await undo();
    throw e;
  }
  const { settle } = projection;
  if (settle === undefined) return projection;
  const settleFork = async (kept: boolean) => {
    await settle(kept);
    if (!kept) return undo();
    fork.forkedFrom?.session.close();
    fork.forkedFrom = undefined;
  };
  return { ...projection, settle: settleFork };
}
