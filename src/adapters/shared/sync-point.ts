import { createHash, type Hash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicAsync } from '../../io/atomic-write.js';
import { UserError } from '../../core/errors.js';
import { PRIVATE_DIR } from '../../io/private.js';

/**
 * How far a conversation's session has followed the framework's message list, and where that
 * is kept. A framework resends the whole conversation on every call; the sync point says
 * which messages are new, and the hashes of the synced messages tell a longer list from an
 * edited one and how much of an edited one is still shared. With a session directory the sync
 * point is saved beside the conversation's store, so a restarted process continues where it
 * left off.
 */
export interface SyncPoint {
  /** How many of the framework's messages the session already holds (or has compacted). */
  synced: number;
  /** Hash of the last synced message: a different one means the framework's list was rewritten. */
  lastHash: string;
  /** Short hashes of every synced message, in order (empty when a saved point predates them). */
  hashes: string[];
  /** Which branch of the conversation is current: 0 the first, each edit that forks adds one. */
  branch: number;
  /**
   * How many messages the branch's store had recorded when the point was saved; messages it
   * recorded beyond that came from a call whose point was never saved (the process died).
   */
  recorded?: number;
}

/** Keys a client sets per request, not per message: a cache breakpoint moves to the newest message. */
const PER_REQUEST_MARKERS = new Set(['cache_control']);

/** A value without per-request markers, and without the empty objects they leave; undefined when nothing is left. */
function withoutMarkers(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutMarkers);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const [k, v] of Object.entries(value)) {
    if (PER_REQUEST_MARKERS.has(k)) continue;
    const x = withoutMarkers(v);
    if (x === undefined) continue;
    out[k] = x;
    kept++;
  }
  return kept > 0 ? out : undefined;
}

/**
 * What a message's round-trip record contributes to its hash: its residual without per-request
 * markers, so a message that differs only in where the client put its cache breakpoint is the
 * same message (its fingerprint goes with a residual that is left empty).
 */
export function roundTripForHash(rt: unknown): unknown {
  if (rt === null || typeof rt !== 'object' || Array.isArray(rt)) return rt;
  // Where its objects sat in the list is not part of the message.
  const { fp, patch, at: _at, items: _items, ...rest } = rt as Record<string, unknown>;
  const left = withoutMarkers(patch);
  return left === undefined ? rest : { ...rest, fp, patch: left };
}

let valuesHashed = 0;

/**
 * How many values {@link hashOf} has serialized and hashed in this process: each is a walk over
 * the whole value, so a request's share of them should follow what it adds, not its history.
 */
export const valuesHashedSoFar = (): number => valuesHashed;

/** A JSON value (a message, usually) fed to a hash; per-request markers of messages do not count. */
const hashed = (value: unknown): Hash => {
  valuesHashed++;
  return createHash('sha256').update(
    JSON.stringify(value, (key, v: unknown) => (key === 'roundTrip' ? roundTripForHash(v) : v)),
  );
};

/** A stable hash of any JSON value (a message, usually); per-request markers of messages do not count. */
export const hashOf = (value: unknown): string => hashed(value).digest('hex');

/**
 * The short form of a hash kept per message: its first 8 bytes in hex, a string of its own (a
 * slice of the full hex would keep all 64 characters alive beside it, for every message of every
 * session).
 */
export const shortDigest = (digest: Buffer): string => digest.toString('hex', 0, 8);
export const messageHash = (value: unknown): string => shortDigest(hashed(value).digest());

// Encoded names longer than this are replaced by a hash (file names stop at 255 bytes).
const MAX_ENCODED = 120;

/**
 * The storage name of a conversation id, one to one: letters, digits, `_` and `-` stay, every
 * other byte of its UTF-8 becomes `%XX`; an encoding longer than 120 characters becomes
 * `%h-` and a hash. No name has a dot, so the suffixes after it (`.fork-N`, `.sync.json`)
 * can only ever belong to the conversation named before it: no id names another's branch,
 * sync file or hashed name.
 */
export function dirName(id: string): string {
  const bytes = Buffer.from(id, 'utf8');
  // A lone surrogate has no UTF-8 of its own: such an id is named by its hash (of its JSON, which keeps it).
  if (bytes.toString('utf8') !== id) return `%h-${hashOf(id).slice(0, 32)}`;
  let encoded = '';
  for (const byte of bytes)
    encoded += /[A-Za-z0-9_-]/.test(String.fromCharCode(byte))
      ? String.fromCharCode(byte)
      : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  if (encoded === '') return '%';
  return encoded.length <= MAX_ENCODED ? encoded : `%h-${hashOf(id).slice(0, 32)}`;
}

/** The id a storage name was made from, or undefined for a hashed or foreign name. */
export function idOfDirName(name: string): string | undefined {
  if (name === '%') return '';
  if (!/^(?:[A-Za-z0-9_-]|%[0-9A-F]{2})+$/.test(name)) return undefined;
  const id = Buffer.from(
    name.replace(/%([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8');
  return dirName(id) === name ? id : undefined;
}

/** The directory name of one branch of a conversation: the first keeps the plain name. */
export const branchName = (id: string, branch: number): string =>
  branch === 0 ? dirName(id) : `${dirName(id)}.fork-${branch}`;

/** The store directory of a conversation's branch under `sessionDir` (created), or undefined without one. */
export function conversationDir(sessionDir: string | undefined, id: string, branch = 0): string | undefined {
  if (sessionDir === undefined) return undefined;
  mkdirSync(sessionDir, { recursive: true, mode: PRIVATE_DIR });
  return join(sessionDir, branchName(id, branch));
}

export function syncFile(sessionDir: string | undefined, id: string): string | undefined {
  return sessionDir === undefined ? undefined : join(sessionDir, `${dirName(id)}.sync.json`);
}

const SavedSyncPointSchema = z.object({
  synced: z.number().int().nonnegative(),
  lastHash: z.string(),
  hashes: z.array(z.string()).optional(),
  branch: z.number().int().nonnegative().optional(),
  recorded: z.number().int().nonnegative().optional(),
});

/** The start of a conversation: nothing synced, the first branch. */
export const START_POINT: SyncPoint = { synced: 0, lastHash: '', hashes: [], branch: 0 };

/** A saved sync point read back (validated), or undefined when it is not one. */
export function syncPointOf(raw: unknown): SyncPoint | undefined {
  const parsed = SavedSyncPointSchema.safeParse(raw);
  if (!parsed.success) return undefined;
  const saved = parsed.data;
  const hashes = saved.hashes?.length === saved.synced ? saved.hashes : [];
  return {
    synced: saved.synced,
    lastHash: saved.lastHash,
    hashes,
    branch: saved.branch ?? 0,
    ...(saved.recorded !== undefined ? { recorded: saved.recorded } : {}),
  };
}

/** The saved sync point of a conversation, or the start when none was saved. */
export function readSyncPoint(sessionDir: string | undefined, id: string): SyncPoint {
  const file = syncFile(sessionDir, id);
  // No point saved yet: whatever the store holds was recorded by calls whose point was never saved.
  if (file === undefined || !existsSync(file)) return { ...START_POINT, hashes: [], recorded: 0 };
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    raw = undefined;
  }
  const point = syncPointOf(raw);
  if (point === undefined)
    throw new UserError(
      `compactor: ${file} is not a conversation sync point (not JSON, or a field is missing)`,
    );
  return point;
}

// Saves of one file in flight, so a later save never lands before an earlier one.
const saving = new Map<string, Promise<void>>();

/**
 * Saves a sync point (when there is a session directory) without blocking other work: the
 * point as it is now, written after any earlier save of the same file has landed.
 */
export function saveSyncPoint(point: SyncPoint, sessionDir: string | undefined, id: string): Promise<void> {
  const file = syncFile(sessionDir, id);
  if (file === undefined) return Promise.resolve();
  const text = JSON.stringify({
    synced: point.synced,
    lastHash: point.lastHash,
    hashes: point.hashes,
    branch: point.branch,
    ...(point.recorded !== undefined ? { recorded: point.recorded } : {}),
  });
  const before = saving.get(file) ?? Promise.resolve();
  const saved = before.catch(() => undefined).then(() => writeFileAtomicAsync(file, text));
  saving.set(file, saved);
  const settled = () => {
    if (saving.get(file) === saved) saving.delete(file);
  };
  saved.then(settled, settled);
  return saved;
}

/** Moves the sync point to the end of `messages` and saves it (when there is a session directory). */
export function advanceSyncPoint(
  point: SyncPoint,
  messages: readonly unknown[],
  sessionDir: string | undefined,
  id: string,
): Promise<void> {
  const last = messages.length > 0 ? messages.length - 1 : -1;
  let lastHash: string | undefined;
  // Hashes of a point saved before they were kept cannot be recovered: they stay empty.
  if (point.hashes.length === point.synced) {
    const fresh = messages.slice(point.synced).map((m, i) => {
      const digest = hashed(m).digest();
      // The last message is hashed once, for its short hash and the point's last hash.
      if (point.synced + i === last) lastHash = digest.toString('hex');
      return shortDigest(digest);
    });
    point.hashes = [...point.hashes, ...fresh];
  } else point.hashes = [];
  point.synced = messages.length;
  point.lastHash = last < 0 ? '' : (lastHash ?? hashOf(messages[last]));
  return saveSyncPoint(point, sessionDir, id);
}

/**
 * Counts messages a branch's store recorded beyond what `point` knew as synced: a call
 * stored them, then the process died before the point was saved. They are the framework's
 * next messages, so the point moves past them and a retry of that call does not add them again.
 */
export function catchUpSyncPoint(point: SyncPoint, recorded: readonly unknown[]): void {
  if (point.recorded === undefined || recorded.length <= point.recorded) return;
  const extra = recorded.slice(point.recorded);
  if (point.hashes.length === point.synced) point.hashes = [...point.hashes, ...extra.map(messageHash)];
  else point.hashes = [];
  point.synced += extra.length;
  point.lastHash = hashOf(extra[extra.length - 1]);
  point.recorded = recorded.length;
}

/** How many leading values two hash chains share (each covers all before it, so halving finds it). */
export function sharedLinks(a: readonly string[], b: readonly string[]): number {
  let lo = 0;
  let hi = Math.min(a.length, b.length);
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (a[mid - 1] === b[mid - 1]) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}
