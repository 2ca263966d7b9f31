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
  /** Remembers what a session holds after a request. */
  update(id: string, messages: readonly Message[], prefix: readonly Message[]): void;
  /**
   * The session for an id the client sends in its body (`metadata.user_id`, `prompt_cache_key`
   * …): that id, unless the session under it opened differently. A client sends the same id
   * with side requests of another conversation (a title, a summary of its own); each such
   * conversation gets a session of its own, `ID~HASH`, rather than forking the main one.
   */
  place(id: string, messages: readonly Message[], prefix: readonly Message[]): string;
}

const SYNC_SUFFIX = '.sync.json';

export function createSessionIndex(dataDir: string | undefined): SessionIndex {
  // Per session: its messages' hashes, and its fixed part's (unknown for one stored by an earlier run).
  const known = new Map<string, { hashes: string[]; fixed?: string }>();
  // Sessions stored by an earlier run: their sync points hold their messages' hashes.
  if (dataDir !== undefined && existsSync(dataDir))
    for (const name of readdirSync(dataDir)) {
      if (!name.endsWith(SYNC_SUFFIX)) continue;
      const id = idOfDirName(name.slice(0, -SYNC_SUFFIX.length));
      // A hashed name cannot give its id back; such a session is found by its id only.
      if (id === undefined) continue;
      try {
        known.set(id, { hashes: readSyncPoint(dataDir, id).hashes });
      } catch {
        // An unreadable sync point names no session to match; opening that id reports it.
      }
    }
  return {
    find(messages, prefix) {
      const hashes = messages.map(messageHash);
      const fixed = hashOf(prefix);
      let best: string | undefined;
      let bestLength = 0;
      for (const [id, { hashes: stored, fixed: storedFixed }] of known) {
        if (stored.length <= bestLength || stored.length > hashes.length) continue;
        if (storedFixed !== undefined && storedFixed !== fixed) continue;
        if (stored.every((h, i) => h === hashes[i])) {
          best = id;
          bestLength = stored.length;
        }
      }
      if (best !== undefined) return best;
      // A new conversation: named by its fixed part and its first message, so the same
      // opening finds the same session again even before it was stored.
      return `c-${hashOf([fixed, messages[0] ?? null]).slice(0, 16)}`;
    },
    update(id, messages, prefix) {
      known.set(id, { hashes: messages.map(messageHash), fixed: hashOf(prefix) });
    },
    place(id, messages, prefix) {
      const fixed = hashOf(prefix);
      const first = messages.length > 0 ? messageHash(messages[0]) : '';
      const stored = known.get(id);
      const sameOpening =
        stored === undefined ||
        ((stored.hashes.length === 0 || stored.hashes[0] === first) &&
          (stored.fixed === undefined || stored.fixed === fixed));
      return sameOpening ? id : `${id}~${hashOf([fixed, first]).slice(0, 8)}`;
    },
  };
}
