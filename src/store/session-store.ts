import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../core/errors.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import type { Message } from '../messages/message.js';
import {
  ArtifactSchema,
  NAME_PATTERN,
  type CompactBoundary,
  type CompactionMode,
  type Strategy,
  type ThreadEvent,
} from './events.js';
import { EventLog, loadEventLog, type LogWarning } from './events-log.js';

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

/** An open session store. Not safe for two writers at once (one runner owns a session). */
export interface SessionStore {
  readonly dir: string;
  /** Appends messages to the live history (one event each, one fsync for the batch). */
  appendMessages(messages: readonly Message[]): void;
  /** Writes the artifact atomically, then appends the boundary event; returns it. */
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
  const eventsFile = join(dir, EVENTS_FILE);
  const artifactsDir = join(dir, ARTIFACTS_DIR);
  const snapshotsDir = join(dir, SNAPSHOTS_DIR);
  if (!existsSync(dir)) {
    if (!create) throw new UserError(`${dir}: no such session directory`);
    mkdirSync(dir, { recursive: true });
  } else if (!statSync(dir).isDirectory()) {
    // A session file passed by mistake would otherwise read as an empty session.
    throw new UserError(`${dir}: not a session directory (it is a file)`);
  }
  if (create) {
    mkdirSync(artifactsDir, { recursive: true });
    mkdirSync(snapshotsDir, { recursive: true });
  }

  const loaded = loadEventLog(eventsFile);
  const warnings: LogWarning[] = [...loaded.warnings];
  const log = new EventLog(eventsFile);
  if (create) log.repairTail(loaded);
  const events: ThreadEvent[] = loaded.events;

  const boundaries = new Map<string, CompactBoundary>();
  let live: Message[] = [];
  for (const e of events) {
    if (e.type === 'message.appended') live.push(e.message);
    else {
      boundaries.set(e.id, e);
      live = e.history.slice();
    }
  }
  for (const d of [artifactsDir, snapshotsDir]) {
    if (!existsSync(d)) continue;
    for (const f of readdirSync(d)) {
      if (STALE_TEMP.test(f)) {
        if (create) unlinkSync(join(d, f));
        warnings.push({
          file: join(d, f),
          line: 0,
          message: 'removed a temp file left by an interrupted write',
        });
      } else if (d === artifactsDir && f.endsWith('.json') && !boundaries.has(f.slice(0, -5)))
        warnings.push({
          file: join(d, f),
          line: 0,
          message: 'artifact has no boundary event (crash before it was recorded); ignored',
        });
    }
  }

  const stamp = () => now().toISOString();
  const append = (e: ThreadEvent) => {
    log.append([e]);
    events.push(e);
  };

  return {
    dir,
    appendMessages(messages) {
      const batch: ThreadEvent[] = messages.map((message, i) => ({
        type: 'message.appended',
        seq: events.length + 1 + i,
        at: stamp(),
        message,
      }));
      log.append(batch);
      events.push(...batch);
      live.push(...messages);
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
      const file = join(dir, b.artifact);
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
    close: () => log.close(),
  };
}
