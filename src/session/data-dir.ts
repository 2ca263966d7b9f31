import { fsError } from '../io/fs-errors.js';
import { privateDir } from '../io/private.js';
import { acquireSessionLock } from '../store/index.js';

// No session's directory or sync file is ever named so: session names never hold an `@`.
const DATA_DIR_LOCK = '@serve.lock';

/** A data directory claimed by one process: release it when done. */
export interface ClaimedDataDir {
  release(): void;
  /** The permissions it had when they let others in (they are now owner-only). */
  tightenedFrom?: number;
}

/**
 * Claims a directory of sessions for this process alone: creates it owner-only (or tightens it)
 * and takes its lock, so a second process on the same directory is refused at once with
 * `busyMessage` instead of both writing the same sessions. A lock left by a process that is gone
 * (killed) is taken over.
 */
export function claimDataDir(dir: string, busyMessage: string): ClaimedDataDir {
  let tightenedFrom: number | undefined;
  try {
    tightenedFrom = privateDir(dir);
  } catch (e) {
    throw fsError(dir, 'create the data directory', e);
  }
  const lock = acquireSessionLock(dir, { name: DATA_DIR_LOCK, busyMessage });
  return { release: () => lock.release(), ...(tightenedFrom !== undefined ? { tightenedFrom } : {}) };
}
