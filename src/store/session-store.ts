import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { join } from 'node:path';
import { fsError } from '../io/fs-errors.js';
import { UserError } from '../core/errors.js';
import { fsyncDir, writeFileAtomic } from '../io/atomic-write.js';
import type { Message } from '../messages/message.js';
import {
  ArtifactSchema,
  NAME_PATTERN,
  type CompactBoundary,
  type CompactionMode,
  type Strategy,
  type ThreadEvent,
} from './events.js';
import { CORRUPT_SUFFIX, EventLog, loadEventLog, type LogWarning } from './events-log.js';
import { acquireSessionLock, type LockOptions, type SessionLock } from './session-lock.js';

/**
 * The durable session store (R1–R2). A session directory holds:
 *
 * - `events.jsonl` — canonical thread events, append-only, fsynced per append;
 * - `artifacts/<boundary-id>.json` — the full live history before each compaction,
 *   written atomically BEFORE its boundary event, so every boundary is recoverable;
 * - `snapshots/<name>.json` — persisted machine snapshots, written atomically.
 *
 * A crash at any point leaves the old state or the new one: an artifact without its
 * boundary event is ignored (and reported), a torn final event line is ignored (and
 * reported) and trimmed before the next append.
 */

/** File and directory names inside a session directory. */
export const EVENTS_FILE = 'events.jsonl';
export const ARTIFACTS_DIR = 'artifacts';
export const SNAPSHOTS_DIR = 'snapshots';
/** Where `startOver` moves an earlier session's records. */
export const PREVIOUS_DIR = 'previous';

/** What to record for one compaction (R1). */
export interface CompactionRecord {
  /** The live history that was compacted (goes to the artifact in full). */
  before: readonly Message[];
  /** The new live history. */
  after: readonly Message[];
  mode: CompactionMode;
  reason: string;
  strategy: Strategy;
}

/** A boundary as listed (without its history). */
export interface BoundaryInfo {
  id: string;
  seq: number;
  at: string;
  before: number;
  after: number;
  mode: CompactionMode;
  reason: string;
  strategy: Strategy;
  /** Artifact path relative to the session directory. */
  artifact: string;
}

/**
 * An open session store. A writer (opened with `create`) holds the directory's lock until
 * {@link SessionStore.close}, so a second writer fails or waits instead of forking the log.
 */
export interface SessionStore {
  readonly dir: string;
  /**
   * Appends messages to the live history (one event each, one fsync for the batch). With
   * `commit: false` they stay pending until {@link SessionStore.commit} or the next
   * compaction, and {@link SessionStore.rollback} (or a crash) drops them.
   */
  appendMessages(messages: readonly Message[], options?: { commit?: boolean }): void;
  /** Commits pending messages (no-op when there are none). */
  commit(): void;
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
  close(): void;
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
}

function checkName(kind: string, name: string): void {
  if (!NAME_PATTERN.test(name))
    throw new UserError(`invalid ${kind} name '${name}' (letters, digits, _ . - only)`);
}

function toInfo(e: CompactBoundary): BoundaryInfo {
  return {
    id: e.id,
    seq: e.seq,
    at: e.at,
    before: e.before,
    after: e.after,
    mode: e.mode,
    reason: e.reason,
    strategy: e.strategy,
    artifact: e.artifact,
  };
}

// Temp files left by a writer killed inside writeFileAtomic (`.name.pid.time.rand.tmp`).
const STALE_TEMP = /^\..+\.tmp$/;

/**
 * Opens (and with `create`, initialises) a session directory, loading and validating its
 * events. Throws a one-line {@link UserError} naming file and line for a damaged log.
 */
export function openSessionStore(dir: string, options: OpenOptions = {}): SessionStore {
  const create = options.create ?? true;
  const now = options.now ?? (() => new Date());
  prepareDir(dir, create);
  const lock = create ? acquireSessionLock(dir, options.lock) : undefined;
  try {
    if (create && options.startOver) moveAside(dir, now());
    return openLocked(dir, create, now, lock);
  } catch (e) {
    lock?.release();
    throw e;
  }
}

function prepareDir(dir: string, create: boolean): void {
  try {
    if (!existsSync(dir)) {
      if (!create) throw new UserError(`${dir}: no such session directory`);
      mkdirSync(dir, { recursive: true });
    } else if (!statSync(dir).isDirectory()) {
      // A session file passed by mistake would otherwise read as an empty session.
      throw new UserError(`${dir}: not a session directory (it is a file)`);
    }
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
    mkdirSync(target, { recursive: true });
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
      if (!STALE_TEMP.test(f)) continue;
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
  create: boolean,
  now: () => Date,
  lock: SessionLock | undefined,
): SessionStore {
  const eventsFile = join(dir, EVENTS_FILE);
  const artifactsDir = join(dir, ARTIFACTS_DIR);
  const snapshotsDir = join(dir, SNAPSHOTS_DIR);
  if (create) {
    try {
      mkdirSync(artifactsDir, { recursive: true });
      mkdirSync(snapshotsDir, { recursive: true });
    } catch (e) {
      throw fsError(dir, 'create the session directory layout', e);
    }
  }

  const loaded = loadEventLog(eventsFile);
  const log = new EventLog(eventsFile);
  const repaired = create ? log.repairTail(loaded) : undefined;
  const warnings: LogWarning[] = loaded.warnings.map((w) =>
    repaired && w.line === 0 ? { ...w, message: `${w.message}; ${repaired}` } : w,
  );
  const events: ThreadEvent[] = loaded.events;

  const boundaries = new Map<string, CompactBoundary>();
  let live: Message[] = [];
  const replay = () => {
    boundaries.clear();
    live = [];
    for (const e of events) {
      if (e.type === 'message.appended') live.push(e.message);
      else {
        boundaries.set(e.id, e);
        live = e.history.slice();
      }
    }
  };
  replay();
  cleanTempFiles([dir, artifactsDir, snapshotsDir], create, warnings);
  if (existsSync(artifactsDir))
    for (const f of readdirSync(artifactsDir))
      if (f.endsWith('.json') && !boundaries.has(f.slice(0, -5)))
        warnings.push({
          file: join(artifactsDir, f),
          line: 0,
          message: 'artifact has no boundary event (crash before it was recorded); ignored',
        });

  const stamp = () => now().toISOString();
  const append = (e: ThreadEvent) => {
    log.append([e]);
    events.push(e);
  };

  return {
    dir,
    appendMessages(messages, opts = {}) {
      const batch: ThreadEvent[] = messages.map((message, i) => ({
        type: 'message.appended',
        seq: events.length + 1 + i,
        at: stamp(),
        message,
      }));
      log.append(batch, opts.commit ?? true);
      events.push(...batch);
      live.push(...messages);
    },
    commit: () => log.commit(),
    rollback() {
      const dropped = log.rollback();
      if (dropped > 0) {
        events.length -= dropped;
        replay();
      }
      return dropped;
    },
    recordCompaction(record) {
      const seq = events.length + 1;
      const id = `compact-${String(seq).padStart(6, '0')}`;
      const artifact = `${ARTIFACTS_DIR}/${id}.json`;
      const at = stamp();
      mkdirSync(artifactsDir, { recursive: true });
      writeFileAtomic(
        join(dir, artifact),
        `${JSON.stringify({ version: 1, boundaryId: id, createdAt: at, messages: record.before })}\n`,
      );
      const event: CompactBoundary = {
        type: 'thread.compact_boundary',
        seq,
        at,
        id,
        before: record.before.length,
        after: record.after.length,
        mode: record.mode,
        reason: record.reason,
        strategy: record.strategy,
        artifact,
        history: record.after.slice(),
      };
      append(event);
      boundaries.set(id, event);
      live = record.after.slice();
      return toInfo(event);
    },
    loadHistory: () => live.slice(),
    listBoundaries: () => [...boundaries.values()].map(toInfo),
    restoreAt(id) {
      checkName('boundary', id);
      const b = boundaries.get(id);
      if (!b)
        throw new UserError(`${eventsFile}: no compaction boundary '${id}' (see listBoundaries / --json)`);
      const file = artifactFile(dir, id, b.artifact);
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        throw new UserError(`${file}: cannot read artifact (${(e as Error).message.split('\n')[0]})`);
      }
      const parsed = ArtifactSchema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new UserError(`${file}: ${issue.path.map(String).join('.') || 'artifact'}: ${issue.message}`);
      }
      if (parsed.data.boundaryId !== id || parsed.data.messages.length !== b.before)
        throw new UserError(
          `${file}: artifact does not match boundary '${id}' (expected ${b.before} messages)`,
        );
      return parsed.data.messages;
    },
    events: () => events,
    saveSnapshot(name, snapshot) {
      checkName('snapshot', name);
      mkdirSync(snapshotsDir, { recursive: true });
      writeFileAtomic(join(snapshotsDir, `${name}.json`), `${JSON.stringify(snapshot)}\n`);
    },
    loadSnapshot(name) {
      checkName('snapshot', name);
      const file = join(snapshotsDir, `${name}.json`);
      if (!existsSync(file)) return undefined;
      try {
        return JSON.parse(readFileSync(file, 'utf8')) as unknown;
      } catch (e) {
        throw new UserError(`${file}: invalid snapshot JSON (${(e as Error).message.split('\n')[0]})`);
      }
    },
    warnings: () => warnings,
    close() {
      log.close();
      lock?.release();
    },
  };
}

/**
 * Where boundary `id`'s artifact is, refusing a recorded path that leads outside the
 * session directory (absolute, `..`, or a symbolic link): the log is input like any other.
 */
function artifactFile(dir: string, id: string, recorded: string): string {
  if (recorded !== `${ARTIFACTS_DIR}/${id}.json`)
    throw new UserError(
      `${join(dir, EVENTS_FILE)}: boundary '${id}' names artifact '${recorded}'; artifacts must be ${ARTIFACTS_DIR}/<boundary>.json inside the session directory`,
    );
  for (const p of [join(dir, ARTIFACTS_DIR), join(dir, recorded)]) {
    let link = false;
    try {
      link = lstatSync(p).isSymbolicLink();
    } catch {
      /* missing: reading reports it */
    }
    if (link)
      throw new UserError(
        `${p}: is a symbolic link; artifacts are read only from inside the session directory`,
      );
  }
  return join(dir, recorded);
}
