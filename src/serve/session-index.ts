import { existsSync, readdirSync } from 'node:fs';
import type { Message } from '../messages/message.js';
import { hashOf, idOfDirName, messageHash, readSyncPoint } from '../adapters/shared/sync-point.js';
import type { RequestChain } from './hash-chain.js';

/**
 * Which session a request belongs to when the client names none: the session whose messages are
 * the longest prefix of the request's (an agent resends its whole history, so its next request
 * starts with everything the last one held), else the session it shares the longest prefix with
 * (an edited or regenerated message: the session forks), else a new one named after the
 * request's opening. Sessions are filed under values of their hash chain, so finding one is a
 * lookup per message of the request, whatever the number of sessions.
 */
export interface SessionIndex {
  /** The session `chain` continues (or forks), or a new id for it. */
  find(messages: readonly Message[], chain: RequestChain): string;
  /** Remembers what a session holds after a request: the request's chain. */
  update(id: string, chain: RequestChain): void;
  /**
   * The session for an id the client sends in its body (`metadata.user_id`, `prompt_cache_key`
   * …): that id, unless the session under it opened differently. A client sends the same id
   * with side requests of another conversation (a title, a summary of its own); each such
   * conversation gets a session of its own, `ID~HASH`, rather than forking the main one.
   */
  place(id: string, messages: readonly Message[], chain: RequestChain): string;
  /** Drops everything kept about a session (it was closed to make room). */
  forget(id: string): void;
  /** How many sessions it keeps something about. */
  readonly size: number;
}

const SYNC_SUFFIX = '.sync.json';

interface Known {
  /** Chain values it is filed under: its head (its whole history), then checkpoints of its prefixes. */
  filed: string[];
  /** Its first chain value (fixed part and first message); undefined while it holds no message. */
  opening?: string;
  /** Short hash of its fixed part. */
  fixed?: string;
  /** A session stored by an earlier run: its messages' canonical short hashes (no chain is stored). */
  stored?: readonly string[];
}

/** Positions (message counts) below `n` whose chain values are filed: 1, 2, 4, 8 … */
function checkpoints(n: number): number[] {
  const out: number[] = [];
  for (let p = 1; p < n; p *= 2) out.push(p);
  return out;
}

/** Files the sessions stored by an earlier run: their sync points hold their messages' hashes. */
function fileStored(dataDir: string, file: (id: string, hashes: readonly string[]) => void): void {
  if (!existsSync(dataDir)) return;
  for (const name of readdirSync(dataDir)) {
    if (!name.endsWith(SYNC_SUFFIX)) continue;
    const id = idOfDirName(name.slice(0, -SYNC_SUFFIX.length));
    // A hashed name cannot give its id back; such a session is found by its id only.
    if (id === undefined) continue;
    try {
      file(id, readSyncPoint(dataDir, id).hashes);
    } catch {
      // An unreadable sync point names no session to match; opening that id reports it.
    }
  }
}

/** A set's last member (the most recently filed), or undefined. */
function newest(ids: Set<string> | undefined): string | undefined {
  let last: string | undefined;
  for (const id of ids ?? []) last = id;
  return last;
}

function add(map: Map<string, Set<string>>, key: string, id: string): void {
  let ids = map.get(key);
  if (ids === undefined) map.set(key, (ids = new Set()));
  ids.add(id);
}

function remove(map: Map<string, Set<string>>, key: string, id: string): void {
  const ids = map.get(key);
  ids?.delete(id);
  if (ids?.size === 0) map.delete(key);
}

/** The longest session of an earlier run whose messages begin `messages` (its last message checked by hash). */
function storedPrefix(
  known: ReadonlyMap<string, Known>,
  storedByFirst: ReadonlyMap<string, Set<string>>,
  messages: readonly Message[],
): string | undefined {
  if (storedByFirst.size === 0 || messages.length === 0) return undefined;
  let best: string | undefined;
  let length = 0;
  for (const id of storedByFirst.get(messageHash(messages[0])) ?? []) {
    const hashes = known.get(id)!.stored!;
    const n = hashes.length;
    if (n <= length || n > messages.length) continue;
    if (hashes[n - 1] !== messageHash(messages[n - 1])) continue;
    best = id;
    length = n;
  }
  return best;
}

export function createSessionIndex(dataDir: string | undefined): SessionIndex {
  const known = new Map<string, Known>();
  // Sessions by chain value: heads (a whole history) and checkpoints (a prefix of one).
  const heads = new Map<string, Set<string>>();
  const marks = new Map<string, Set<string>>();
  // Sessions of an earlier run by their first message's hash, until a request updates them.
  const storedByFirst = new Map<string, Set<string>>();
  const forget = (id: string) => {
    const entry = known.get(id);
    if (entry === undefined) return;
    known.delete(id);
    entry.filed.forEach((value, i) => remove(i === 0 ? heads : marks, value, id));
    if (entry.stored !== undefined && entry.stored.length > 0) remove(storedByFirst, entry.stored[0], id);
  };
  if (dataDir !== undefined)
    fileStored(dataDir, (id, hashes) => {
      known.set(id, { filed: [], stored: hashes });
      if (hashes.length > 0) add(storedByFirst, hashes[0], id);
    });

  return {
    find(messages, chain) {
      const { links } = chain;
      for (let i = links.length; i > 0; i--) {
        const id = newest(heads.get(links[i - 1]));
        if (id !== undefined) return id;
      }
      const stored = storedPrefix(known, storedByFirst, messages);
      if (stored !== undefined) return stored;
      // No session this continues: the one it shares the longest prefix with (it forks there).
      for (const p of checkpoints(links.length + 1).reverse()) {
        const id = newest(marks.get(links[p - 1]));
        if (id !== undefined) return id;
      }
      // A new conversation: named by its fixed part and its first message, so the same
      // opening finds the same session again even before it was stored (or after it was closed).
      return `c-${hashOf([chain.fixed, messages[0] ?? null]).slice(0, 16)}`;
    },
    update(id, chain) {
      const { links } = chain;
      forget(id);
      const n = links.length;
      const filed = n > 0 ? [links[n - 1], ...checkpoints(n).map((p) => links[p - 1])] : [];
      known.set(id, { filed, fixed: chain.fixed.slice(0, 16), ...(n > 0 ? { opening: links[0] } : {}) });
      filed.forEach((value, i) => add(i === 0 ? heads : marks, value, id));
    },
    place(id, messages, chain) {
      const stored = known.get(id);
      // Hashed as a whole only when the chain cannot tell (a session of an earlier run) or for a new name.
      const first = () => (messages.length > 0 ? messageHash(messages[0]) : '');
      const sameOpening =
        stored === undefined ||
        (stored.stored !== undefined
          ? stored.stored.length === 0 || stored.stored[0] === first()
          : (stored.opening === undefined || stored.opening === chain.links[0]) &&
            stored.fixed === chain.fixed.slice(0, 16));
      return sameOpening ? id : `${id}~${hashOf([chain.fixed, first()]).slice(0, 8)}`;
    },
    forget,
    get size() {
      return known.size;
    },
  };
}
