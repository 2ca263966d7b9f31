import { existsSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fsError } from '../io/fs-errors.js';
import { UserError } from '../core/errors.js';
import { ATOMIC_TEMP_NAME, fsyncDir } from '../io/atomic-write.js';
import type { Json, Message } from '../messages/message.js';
import type { CompactionStrategy } from '../../machines/index.js';
import { type CompactionOrigin, type ThreadEvent } from './events.js';
import { CORRUPT_SUFFIX } from './events-log.js';
import type { LogWarning } from './load-event-log.js';
import { OpenStore } from './open-store.js';
import { ARTIFACTS_DIR, EVENTS_FILE, SNAPSHOTS_DIR } from './artifacts.js';
import { acquireSessionLock, type LockOptions, type SessionLock } from './session-lock.js';
import { PRIVATE_DIR } from '../io/private.js';

/**
 * The durable session store. A session directory holds:
 *
 * - `events.jsonl` — canonical thread events, append-only, fsynced per append (or per group
 *   of queued appends);
 * - `artifacts/<boundary-id>.json` — the full live history before each compaction,
 *   written atomically BEFORE its boundary event, so every boundary is recoverable;
 * - `snapshots/<name>.json` — persisted machine snapshots, written atomically.
 *
 * A crash at any point leaves the old state or the new one: an artifact without its
 * boundary event is ignored (and reported), a torn final event line is ignored (and
 * reported) and trimmed before the next append.
 */

/** File and directory names inside a session directory. */
export { EVENTS_FILE, ARTIFACTS_DIR, SNAPSHOTS_DIR } from './artifacts.js';
/** Where `startOver` moves an earlier session's records. */
export const PREVIOUS_DIR = 'previous';

/** What to record for one compaction. */
export interface CompactionRecord {
  /** The live history that was compacted (goes to the artifact in full). */
  before: readonly Message[];
  /** The new live history. */
  after: readonly Message[];
  mode: CompactionOrigin;
  reason: string;
  strategy: CompactionStrategy;
  /** The compaction's receipt, kept in the boundary event (absent for a native pass). */
  receipt?: Json;
  /** A note kept on the boundary's commit line (see {@link SessionStore.keptCarry}). */
  carry?: unknown;
}

/** A boundary as listed (without its history). */
export interface BoundaryInfo {
  id: string;
  seq: number;
  at: string;
  before: number;
  after: number;
  mode: CompactionOrigin;
  reason: string;
  strategy: CompactionStrategy;
  /** Artifact path relative to the session directory. */
  artifact: string;
}

/**
 * An open session store: what a session needs from wherever its records live. A writer holds
 * the session's exclusive-writer lease (a directory's lock file, or the one-writer-per-key
 * rule of a durable-execution server) until {@link SessionStore.close}, so a second writer
 * fails or waits instead of forking the log.
 */
export interface SessionStore {
  /** The session directory of a file store (turn checkpoints are written beside it); absent elsewhere. */
  readonly dir?: string;
  /**
   * Appends messages to the live history (one event each, one fsync for the batch). With
   * `commit: false` they stay pending until {@link SessionStore.commit} or the next
   * compaction, and {@link SessionStore.rollback} (or a crash) drops them.
   */
  appendMessages(messages: readonly Message[], options?: { commit?: boolean; carry?: unknown }): void;
  /**
   * Appends and commits messages, returning once they are written and before their fsync,
   * which runs off the event loop; the promise resolves once they are durable. When the fsync
   * fails they are dropped again, it rejects, and the store refuses further writes: reopen it.
   * A file store has it, so a caller can do its own work while the disk is busy. `carry` is
   * kept with the write (written even with no messages).
   */
  appendMessagesSyncingLater?(messages: readonly Message[], carry?: unknown): Promise<void>;
  /** Commits pending messages (no-op when there are none), keeping `carry` with them. */
  commit(carry?: unknown): void;
  /**
   * The last small note a committed write kept (`carry` of the writes above: what a session
   * hands its next turn) and how many events it follows; a file store has it.
   */
  keptCarry?(): { events: number; carry: unknown } | undefined;
  /** Drops pending messages from the log and the live history; returns how many. */
  rollback(): number;
  /** Writes the artifact atomically, then appends the boundary event (a commit); returns it. */
  recordCompaction(record: CompactionRecord): BoundaryInfo;
  /** The live history: the last boundary's history plus the messages appended after it. */
  loadHistory(): Message[];
  listBoundaries(): BoundaryInfo[];
  /** The full live history as it was just before boundary `id` (from its artifact). */
  restoreAt(id: string): Message[];
  /** Every event, in order (read-only view). */
  events(): readonly ThreadEvent[];
  saveSnapshot(name: string, snapshot: unknown): void;
  /** A saved snapshot, or `undefined` when none was saved under `name`. */
  loadSnapshot(name: string): unknown;
  /** What loading tolerated: torn lines, orphan artifacts, stale temp files. */
  warnings(): readonly LogWarning[];
  /**
   * Resolves once every write so far is durable. Only a store that queues its writes has it
   * (a file store opened with `queued`); then a failed write rejects here, the file is back at
   * its last commit and the store refuses further writes: reopen it.
   */
  flush?(): Promise<void>;
  /**
   * Resolves once every queued write so far reached the file, its fsync perhaps still running:
   * it then survives a killed process, not a crash of the machine. Only a store that queues its
   * writes has it; a failed write rejects here as in {@link SessionStore.flush}.
   */
  written?(): Promise<void>;
  /** Closes the store; with queued writes the writer's lease is let go once they have landed. */
  close(): void;
}

/** A session directory opened with {@link openSessionStore}. */
export interface FileSessionStore extends SessionStore {
  readonly dir: string;
  appendMessagesSyncingLater(messages: readonly Message[], carry?: unknown): Promise<void>;
  keptCarry(): { events: number; carry: unknown } | undefined;
}

/**
 * Where a session keeps its records. `open` returns the store as the session's one writer
 * (it throws when another writer holds the session); `startOver` moves earlier records aside.
 */
export interface SessionStoreSource {
  open(options: { startOver?: boolean }): SessionStore;
}

/**
 * The default source: a session directory on this machine, guarded by its lock file. With
 * `queued` its writes leave the event loop free (see {@link OpenOptions.queued}).
 */
export function fileStore(
  dir: string,
  options: { lock?: LockOptions; queued?: boolean } = {},
): SessionStoreSource {
  const { lock, queued } = options;
  return { open: ({ startOver }) => openSessionStore(dir, { lock, startOver, queued }) };
}

/** Options of {@link openSessionStore}. */
export interface OpenOptions {
  /** Create the directory if missing (default true). Read-only callers pass false. */
  create?: boolean;
  /** Clock for event times (tests). */
  now?: () => Date;
  /** How a writer waits for the directory's lock (default: fail at once when busy). */
  lock?: LockOptions;
  /** Writer only: move an existing session's records into `previous/<time>/` and start anew. */
  startOver?: boolean;
  /**
   * Writer only: queue the writes (in order, off the event loop, appends made together sharing
   * one fsync) instead of making each at once; {@link SessionStore.flush} is then the durability
   * point. For a server, where one session's disk wait must not hold the others' requests.
   */
  queued?: boolean;
}

/**
 * Opens (and with `create`, initialises) a session directory, loading and validating its
 * events. Throws a one-line {@link UserError} naming file and line for a damaged log.
 */
export function openSessionStore(dir: string, options: OpenOptions = {}): FileSessionStore {
  const create = options.create ?? true;
  const now = options.now ?? (() => new Date());
  const made = prepareDir(dir, create);
  const lock = create ? acquireSessionLock(dir, options.lock) : undefined;
  try {
    if (create && options.startOver) moveAside(dir, now());
    return openLocked(dir, { create, made }, now, lock, options.queued ?? false);
  } catch (e) {
    lock?.release();
    throw e;
  }
}

/** Returns whether it made the directory just now (then no earlier writer left anything in it). */
function prepareDir(dir: string, create: boolean): boolean {
  try {
    if (!existsSync(dir)) {
      if (!create) throw new UserError(`${dir}: no such session directory`);
      // Names the first directory it made; nothing when another process made it meanwhile.
      return mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR }) !== undefined;
    } else if (!statSync(dir).isDirectory()) {
      // A session file passed by mistake would otherwise read as an empty session.
      throw new UserError(`${dir}: not a session directory (it is a file)`);
    }
    return false;
  } catch (e) {
    throw fsError(dir, 'open the session directory', e);
  }
}

/** Moves a session's records into `previous/<time>/` (under the lock), so a new one can start. */
function moveAside(dir: string, at: Date): void {
  const names = [EVENTS_FILE, `${EVENTS_FILE}${CORRUPT_SUFFIX}`, ARTIFACTS_DIR, SNAPSHOTS_DIR];
  const present = names.filter((n) => existsSync(join(dir, n)));
  if (present.length === 0) return;
  const target = join(dir, PREVIOUS_DIR, at.toISOString().replace(/[:.]/g, '-'));
  try {
    mkdirSync(target, { recursive: true, mode: PRIVATE_DIR });
    for (const n of present) renameSync(join(dir, n), join(target, n));
  } catch (e) {
    throw fsError(target, 'move the previous session aside', e);
  }
  fsyncDir(dir);
}

/** Removes (writer) or reports temp files left by a writer killed inside writeFileAtomic. */
function cleanTempFiles(dirs: string[], create: boolean, warnings: LogWarning[]): void {
  for (const d of dirs) {
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d)) {
      // Only the shape writeFileAtomic gives its temp files: a user's own `.notes.tmp` stays.
      if (!ATOMIC_TEMP_NAME.test(f)) continue;
      if (create) unlinkSync(join(d, f));
      warnings.push({
        file: join(d, f),
        line: 0,
        message: 'removed a temp file left by an interrupted write',
      });
    }
  }
}

function openLocked(
  dir: string,
  { create, made }: { create: boolean; made: boolean },
  now: () => Date,
  lock: SessionLock | undefined,
  queued: boolean,
): FileSessionStore {
  if (create) {
    try {
      mkdirSync(join(dir, ARTIFACTS_DIR), { recursive: true, mode: PRIVATE_DIR });
      mkdirSync(join(dir, SNAPSHOTS_DIR), { recursive: true, mode: PRIVATE_DIR });
    } catch (e) {
      throw fsError(dir, 'create the session directory layout', e);
    }
  }
  const store = new OpenStore(dir, create, now, lock, queued);
  // A directory made by this open holds no temp file or artifact yet: a server opens a new
  // session on the way of its first request, so it skips the listings.
  if (made) return store;
  cleanTempFiles([dir, join(dir, ARTIFACTS_DIR), join(dir, SNAPSHOTS_DIR)], create, store.loadWarnings);
  store.reportOrphanArtifacts();
  return store;
}
