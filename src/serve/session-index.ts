import { existsSync, readdirSync } from 'node:fs';
import type { Message } from '../messages/message.js';
import { hashOf, idOfDirName, messageHash, readSyncPoint } from '../adapters/shared/sync-point.js';

/**
 * Which session a request belongs to when the client names none: the session whose stored
 * messages are the longest prefix of the request's (an agent resends its whole history, so
 * its next request starts with everything the last one held), else a new one named after
 * the request's opening.
 */
export interface SessionIndex {
  /** The session whose messages are the longest prefix of `messages`, or a new id for them. */
  find(messages: readonly Message[], prefix: readonly Message[]): string;
  /**
   * Remembers what a session holds after a request. `hashes` are its messages' short hashes
   * when the caller already has them (the session's sync point), so none is hashed again.
   */
  update(
    id: string,
    messages: readonly Message[],
    prefix: readonly Message[],
    hashes?: readonly string[],
  ): void;
  /**
   * The session for an id the client sends in its body (`metadata.user_id`, `prompt_cache_key`
   * …): that id, unless the session under it opened differently. A client sends the same id
   * with side requests of another conversation (a title, a summary of its own); each such
   * conversation gets a session of its own, `ID~HASH`, rather than forking the main one.
   */
  place(id: string, messages: readonly Message[], prefix: readonly Message[]): string;
  /** Drops everything kept about a session (it was closed to make room). */
  forget(id: string): void;
  /** How many sessions it keeps something about. */
  readonly size: number;
}

const SYNC_SUFFIX = '.sync.json';

interface Known {
  /** Short hashes of the session's messages (shared with its sync point when it gave them). */
  hashes: readonly string[];
  /** Hash of its fixed part (unknown for one stored by an earlier run). */
  fixed?: string;
  /** The key it is filed under in `byOpening`. */
  opening: string;
}

/** The key sessions that open alike are filed under: the fixed part's hash and the first message's. */
const openingKey = (fixed: string | undefined, first: string | undefined) => `${fixed ?? '*'}:${first ?? ''}`;

/** Files the sessions stored by an earlier run: their sync points hold their messages' hashes. */
function fileStored(dataDir: string, file: (id: string, entry: Known) => void): void {
  if (!existsSync(dataDir)) return;
  for (const name of readdirSync(dataDir)) {
    if (!name.endsWith(SYNC_SUFFIX)) continue;
    const id = idOfDirName(name.slice(0, -SYNC_SUFFIX.length));
    // A hashed name cannot give its id back; such a session is found by its id only.
    if (id === undefined) continue;
    try {
      const { hashes } = readSyncPoint(dataDir, id);
      file(id, { hashes, opening: openingKey(undefined, hashes[0]) });
    } catch {
      // An unreadable sync point names no session to match; opening that id reports it.
    }
  }
}

/** The longest session among `ids` whose messages begin `messages`, over `best` (its last message checked by hash). */
function longest(
  known: ReadonlyMap<string, Known>,
  ids: Iterable<string> | undefined,
  messages: readonly Message[],
  best?: string,
): string | undefined {
  let length = best === undefined ? 0 : known.get(best)!.hashes.length;
  for (const id of ids ?? []) {
    const { hashes } = known.get(id)!;
    const n = hashes.length;
    if (n <= length || n > messages.length) continue;
    // Like the sync point, the last stored message tells a longer list from a rewritten one.
    if (hashes[n - 1] !== messageHash(messages[n - 1])) continue;
    best = id;
    length = n;
  }
  return best;
}

export function createSessionIndex(dataDir: string | undefined): SessionIndex {
  const known = new Map<string, Known>();
  // Sessions by how they open, so a request is matched against those only, not against all.
  const byOpening = new Map<string, Set<string>>();
  const file = (id: string, entry: Known) => {
    known.set(id, entry);
    let ids = byOpening.get(entry.opening);
    if (ids === undefined) byOpening.set(entry.opening, (ids = new Set()));
    ids.add(id);
  };
  const forget = (id: string) => {
    const entry = known.get(id);
    if (entry === undefined) return;
    known.delete(id);
    const ids = byOpening.get(entry.opening);
    ids?.delete(id);
    if (ids?.size === 0) byOpening.delete(entry.opening);
  };
  if (dataDir !== undefined) fileStored(dataDir, file);
  // One request's fixed part is hashed once, though finding and updating its session both need it.
  const fixedHashes = new WeakMap<readonly Message[], string>();
  const fixedOf = (prefix: readonly Message[]) => {
    let h = fixedHashes.get(prefix);
    if (h === undefined) fixedHashes.set(prefix, (h = hashOf(prefix)));
    return h;
  };
  return {
    find(messages, prefix) {
      const fixed = fixedOf(prefix);
      const first = messages.length > 0 ? messageHash(messages[0]) : undefined;
      const sameFixed = longest(known, byOpening.get(openingKey(fixed, first)), messages);
      const best = longest(known, byOpening.get(openingKey(undefined, first)), messages, sameFixed);
      if (best !== undefined) return best;
      // A new conversation: named by its fixed part and its first message, so the same
      // opening finds the same session again even before it was stored (or after it was closed).
      return `c-${hashOf([fixed, messages[0] ?? null]).slice(0, 16)}`;
    },
    update(id, messages, prefix, hashes) {
      const own =
        hashes !== undefined && hashes.length === messages.length ? hashes : messages.map(messageHash);
      const fixed = fixedOf(prefix);
      forget(id);
      file(id, { hashes: own, fixed, opening: openingKey(fixed, own[0]) });
    },
    place(id, messages, prefix) {
      const fixed = fixedOf(prefix);
      const first = messages.length > 0 ? messageHash(messages[0]) : '';
      const stored = known.get(id);
      const sameOpening =
        stored === undefined ||
        ((stored.hashes.length === 0 || stored.hashes[0] === first) &&
          (stored.fixed === undefined || stored.fixed === fixed));
      return sameOpening ? id : `${id}~${hashOf([fixed, first]).slice(0, 8)}`;
    },
    forget,
    get size() {
      return known.size;
    },
  };
}
