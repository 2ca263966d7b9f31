import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../io/atomic-write.js';

/**
 * How far a conversation's session has followed the framework's message list, and where that
 * is kept. A framework resends the whole conversation on every call; the sync point says
 * which messages are new, and the hash of the last synced message tells a rewritten list from
 * a longer one. With a session directory the sync point is saved beside the conversation's
 * store, so a restarted process continues where it left off.
 */
export interface SyncPoint {
  /** How many of the framework's messages the session already holds (or has compacted). */
  synced: number;
  /** Hash of the last synced message: a different one means the framework's list was rewritten. */
  lastHash: string;
}

/** A stable hash of any JSON value (a message, usually). */
export const hashOf = (value: unknown): string =>
  createHash('sha256').update(JSON.stringify(value)).digest('hex');

/** A directory name for an id: itself when plainly safe, else a hash. */
function dirName(id: string): string {
  return /^[A-Za-z0-9._-]{1,80}$/.test(id) && !/^\.+$/.test(id) ? id : `h-${hashOf(id).slice(0, 24)}`;
}

/** The conversation's store directory under `sessionDir` (created), or undefined without one. */
export function conversationDir(sessionDir: string | undefined, id: string): string | undefined {
  if (sessionDir === undefined) return undefined;
  mkdirSync(sessionDir, { recursive: true });
  return join(sessionDir, dirName(id));
}

function syncFile(sessionDir: string | undefined, id: string): string | undefined {
  return sessionDir === undefined ? undefined : join(sessionDir, `${dirName(id)}.sync.json`);
}

/** The saved sync point of a conversation, or the start when none was saved. */
export function readSyncPoint(sessionDir: string | undefined, id: string): SyncPoint {
  const file = syncFile(sessionDir, id);
  if (file === undefined || !existsSync(file)) return { synced: 0, lastHash: '' };
  const saved = JSON.parse(readFileSync(file, 'utf8')) as SyncPoint;
  return { synced: saved.synced, lastHash: saved.lastHash };
}

/** Moves the sync point to the end of `messages` and saves it (when there is a session directory). */
export function advanceSyncPoint(
  point: SyncPoint,
  messages: readonly unknown[],
  sessionDir: string | undefined,
  id: string,
): void {
  point.synced = messages.length;
  point.lastHash = messages.length > 0 ? hashOf(messages[messages.length - 1]) : '';
  const file = syncFile(sessionDir, id);
  if (file !== undefined)
    writeFileAtomic(file, JSON.stringify({ synced: point.synced, lastHash: point.lastHash }));
}
