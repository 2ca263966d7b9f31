import type { ConversationStores } from '../adapters/shared/conversations.js';
import { branchName, START_POINT, syncPointOf, type SyncPoint } from '../adapters/shared/sync-point.js';
import { InternalError, RequestRefusedError, UserError } from '../core/errors.js';
import { restateStore, type RestateStore } from '../restate/restate-store.js';

/**
 * The proxy's sessions kept in Restate `compactorSession` objects instead of a data directory:
 * one object per branch of a conversation (keyed by the id's storage name, then `NAME.fork-N`
 * for each edit that forked it), loaded over the ingress when the conversation is first seen and saved
 * back after each request, so a restarted proxy, or another one, continues it. The first
 * branch's object also keeps how far the conversation was followed (its sync point).
 */
export interface RestateSessions extends ConversationStores {
  /** Loads what a request of conversation `id` may need: its current branch, and the next one in case it forks. */
  prepare(id: string): Promise<void>;
}

/** The snapshot name the sync point is kept under in the first branch's object. */
const SYNC_SNAPSHOT = 'conversation-sync';

/** Just the sync point's own fields (the conversation's state carries more). */
const pointFields = ({ synced, lastHash, hashes, branch }: SyncPoint): SyncPoint => ({
  synced,
  lastHash,
  hashes,
  branch,
});

// The same one-to-one names as on disk: no id names another conversation's branch object.
const branchKey = branchName;

export function restateSessions(ingress: string): RestateSessions {
  const loaded = new Map<string, Promise<RestateStore>>();
  const ready = new Map<string, RestateStore>();

  const load = (id: string, branch: number): Promise<RestateStore> => {
    const key = branchKey(id, branch);
    let store = loaded.get(key);
    if (store === undefined) {
      store = restateStore({ ingress, key }).then((s) => {
        ready.set(key, s);
        return s;
      });
      // A failed load is tried again by the next request.
      store.catch(() => loaded.delete(key));
      loaded.set(key, store);
    }
    return store;
  };
  const loadedStore = (id: string, branch: number): RestateStore => {
    const store = ready.get(branchKey(id, branch));
    if (store === undefined)
      throw new InternalError(
        `compactor: the Restate object of session "${id}" was used before it was loaded`,
      );
    return store;
  };
  const syncPoint = (id: string): SyncPoint => {
    const saved = loadedStore(id, 0).loadSnapshot(SYNC_SNAPSHOT);
    if (saved === undefined) return { ...START_POINT, hashes: [] };
    const point = syncPointOf(saved);
    if (point === undefined)
      throw new UserError(`compactor: the Restate object of session "${id}" holds no valid sync point`);
    return point;
  };

  return {
    async prepare(id) {
      try {
        await load(id, 0);
        const { branch } = syncPoint(id);
        await Promise.all([load(id, branch), load(id, branch + 1)]);
      } catch (e) {
        throw unreachable(ingress, e);
      }
    },
    syncPoint,
    source: loadedStore,
    async commit(id, branch, point) {
      const first = loadedStore(id, 0);
      first.saveSnapshot(SYNC_SNAPSHOT, pointFields(point));
      try {
        if (branch > 0) await loadedStore(id, branch).save();
        await first.save();
      } catch (e) {
        throw unreachable(ingress, e);
      }
    },
  };
}

/**
 * A Restate server that cannot be reached, or refuses a load or save, fails the request with
 * a 502 saying so (a refused save is another proxy writing the same session).
 */
function unreachable(ingress: string, e: unknown): Error {
  if (UserError.isInstance(e)) return new RequestRefusedError(502, e.message);
  const cause = (e as { cause?: { code?: string } } | undefined)?.cause?.code;
  const why = cause ?? (e as Error | undefined)?.message ?? String(e);
  return new RequestRefusedError(502, `the Restate server at ${ingress} did not answer (${why})`);
}
