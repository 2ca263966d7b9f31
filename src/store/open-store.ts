import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UserError } from '../core/errors.js';
import { writeFileAtomic, writeFileAtomicAsync } from '../io/atomic-write.js';
import { mkdir } from 'node:fs/promises';
import type { Message } from '../messages/message.js';
import { ARTIFACTS_DIR, EVENTS_FILE, readArtifact, SNAPSHOTS_DIR } from './artifacts.js';
import { NAME_PATTERN, type CompactBoundary, type ThreadEvent } from './events.js';
import { EventLog } from './events-log.js';
import { loadEventLog, type KeptCarry, type LogWarning } from './load-event-log.js';
import type { SessionLock } from './session-lock.js';
import type { BoundaryInfo, CompactionRecord, SessionStore } from './session-store.js';
import { PRIVATE_DIR } from '../io/private.js';

export function checkName(kind: string, name: string): void {
  if (!NAME_PATTERN.test(name))
    throw new UserError(`invalid ${kind} name '${name}' (letters, digits, _ . - only)`);
}

/** A boundary as listed: its event without the history. */
export function toInfo(e: CompactBoundary): BoundaryInfo {
  const { id, seq, at, before, after, mode, reason, strategy, artifact } = e;
  return { id, seq, at, before, after, mode, reason, strategy, artifact };
}

/** The live history the events leave (the last boundary's plus later messages); fills `boundaries`. */
export function replayEvents(
  events: readonly ThreadEvent[],
  boundaries: Map<string, CompactBoundary>,
): Message[] {
  boundaries.clear();
  let live: Message[] = [];
  for (const e of events) {
    if (e.type === 'message.appended') live.push(e.message);
    else {
      boundaries.set(e.id, e);
      live = e.history.slice();
    }
  }
  return live;
}

/** The boundary event for compaction `record` at position `seq` of the log. */
export function boundaryEvent(seq: number, at: string, record: CompactionRecord): CompactBoundary {
  const id = `compact-${String(seq).padStart(6, '0')}`;
  const { before, after, mode, reason, strategy, receipt } = record;
  return {
    type: 'thread.compact_boundary',
    seq,
    at,
    id,
    before: before.length,
    after: after.length,
    mode,
    reason,
    strategy,
    artifact: `${ARTIFACTS_DIR}/${id}.json`,
    history: after.slice(),
    ...(receipt === undefined ? {} : { receipt }),
  };
}

/**
 * An open session directory (see {@link SessionStore}): its committed events in memory, the
 * live history replayed from them, and the log that appends, commits and rolls back.
 */
export class OpenStore implements SessionStore {
  /** What loading tolerated (the opener adds temp-file and orphan-artifact notes). */
  readonly loadWarnings: LogWarning[];
  private readonly eventsFile: string;
  private readonly log: EventLog;
  private readonly loaded: ThreadEvent[];
  private readonly boundaries = new Map<string, CompactBoundary>();
  private live: Message[] = [];
  /** Artifacts and snapshots whose queued write has not landed yet: read from here meanwhile. */
  private readonly unwritten = new Map<string, string>();
  private carry: KeptCarry | undefined;

  constructor(
    readonly dir: string,
    create: boolean,
    private readonly now: () => Date,
    private readonly lock: SessionLock | undefined,
    queued = false,
  ) {
    this.eventsFile = join(dir, EVENTS_FILE);
    const loaded = loadEventLog(this.eventsFile);
    this.log = new EventLog(this.eventsFile);
    const repaired = create ? this.log.repairTail(loaded) : undefined;
    if (create && queued) this.log.queueWrites();
    this.loadWarnings = loaded.warnings.map((w) =>
      repaired && w.line === 0 ? { ...w, message: `${w.message}; ${repaired}` } : w,
    );
    this.loaded = loaded.events;
    this.carry = loaded.carry;
    this.replay();
  }

  /** An artifact without its boundary event was written by a writer killed before it. */
  reportOrphanArtifacts(): void {
    const artifactsDir = join(this.dir, ARTIFACTS_DIR);
    if (!existsSync(artifactsDir)) return;
    for (const f of readdirSync(artifactsDir))
      if (f.endsWith('.json') && !this.boundaries.has(f.slice(0, -5)))
        this.loadWarnings.push({
          file: join(artifactsDir, f),
          line: 0,
          message: 'artifact has no boundary event (crash before it was recorded); ignored',
        });
  }

  private replay(): void {
    this.live = replayEvents(this.loaded, this.boundaries);
  }

  private stamp(): string {
    return this.now().toISOString();
  }

  private batch(messages: readonly Message[]): ThreadEvent[] {
    const at = this.stamp();
    return messages.map((message, i) => ({
      type: 'message.appended',
      seq: this.loaded.length + 1 + i,
      at,
      message,
    }));
  }

  appendMessages(messages: readonly Message[], opts: { commit?: boolean; carry?: unknown } = {}): void {
    const batch = this.batch(messages);
    const commit = opts.commit ?? true;
    this.log.append(batch, commit, opts.carry);
    this.loaded.push(...batch);
    this.live.push(...messages);
    if (commit) this.kept(opts.carry);
  }

  appendMessagesSyncingLater(messages: readonly Message[], carry?: unknown): Promise<void> {
    const batch = this.batch(messages);
    const synced = this.log.appendSyncingLater(batch, carry);
    this.loaded.push(...batch);
    this.live.push(...messages);
    this.kept(carry);
    return synced.catch((e: unknown) => {
      // The log cut them off again (nothing is written after them while the caller waits).
      if (this.loaded.at(-1) === batch.at(-1)) {
        this.loaded.length -= batch.length;
        this.replay();
      }
      throw e;
    });
  }

  commit(carry?: unknown): void {
    const pending = this.log.pending > 0;
    this.log.commit(carry);
    if (pending) this.kept(carry);
  }

  /** Remembers the note a committed write just kept. */
  private kept(carry: unknown): void {
    if (carry !== undefined) this.carry = { events: this.loaded.length, carry };
  }

  keptCarry(): KeptCarry | undefined {
    return this.carry;
  }

  rollback(): number {
    const dropped = this.log.rollback();
    if (dropped > 0) {
      this.loaded.length -= dropped;
      this.replay();
    }
    return dropped;
  }

  recordCompaction(record: CompactionRecord): BoundaryInfo {
    const event = boundaryEvent(this.loaded.length + 1, this.stamp(), record);
    // The artifact is on disk before the boundary that refers to it.
    this.write(
      ARTIFACTS_DIR,
      event.artifact,
      `${JSON.stringify({ version: 1, boundaryId: event.id, createdAt: event.at, messages: record.before })}\n`,
    );
    this.log.append([event], true, record.carry);
    this.loaded.push(event);
    this.kept(record.carry);
    this.boundaries.set(event.id, event);
    this.live = record.after.slice();
    return toInfo(event);
  }

  /** Writes a file of the directory atomically, at once or in order with the queued appends. */
  private write(sub: string, name: string, text: string): void {
    const file = join(this.dir, name);
    const now = () => {
      mkdirSync(join(this.dir, sub), { recursive: true, mode: PRIVATE_DIR });
      writeFileAtomic(file, text);
    };
    this.unwritten.set(name, text);
    const landed = () => {
      if (this.unwritten.get(name) === text) this.unwritten.delete(name);
    };
    this.log.inOrder(
      async () => {
        await mkdir(join(this.dir, sub), { recursive: true, mode: PRIVATE_DIR });
        await writeFileAtomicAsync(file, text);
        landed();
      },
      () => {
        try {
          now();
        } finally {
          landed();
        }
      },
    );
  }

  /** Resolves once every write so far reached the file (see {@link SessionStore.written}). */
  written(): Promise<void> {
    return this.log.written();
  }

  /** Resolves once every write so far is on disk (see {@link SessionStore.flush}). */
  flush(): Promise<void> {
    return this.log.flush();
  }

  loadHistory(): Message[] {
    return this.live.slice();
  }

  listBoundaries(): BoundaryInfo[] {
    return [...this.boundaries.values()].map(toInfo);
  }

  restoreAt(id: string): Message[] {
    checkName('boundary', id);
    const b = this.boundaries.get(id);
    if (!b)
      throw new UserError(`${this.eventsFile}: no compaction boundary '${id}' (listBoundaries() lists them)`);
    const unwritten = this.unwritten.get(b.artifact);
    if (unwritten !== undefined) return (JSON.parse(unwritten) as { messages: Message[] }).messages;
    return readArtifact(this.dir, b);
  }

  events(): readonly ThreadEvent[] {
    return this.loaded;
  }

  saveSnapshot(name: string, snapshot: unknown): void {
    checkName('snapshot', name);
    this.write(SNAPSHOTS_DIR, `${SNAPSHOTS_DIR}/${name}.json`, `${JSON.stringify(snapshot)}\n`);
  }

  loadSnapshot(name: string): unknown {
    checkName('snapshot', name);
    const file = join(this.dir, SNAPSHOTS_DIR, `${name}.json`);
    const unwritten = this.unwritten.get(`${SNAPSHOTS_DIR}/${name}.json`);
    if (unwritten === undefined && !existsSync(file)) return undefined;
    try {
      return JSON.parse(unwritten ?? readFileSync(file, 'utf8')) as unknown;
    } catch (e) {
      throw new UserError(`${file}: invalid snapshot JSON (${(e as Error).message.split('\n')[0]})`);
    }
  }

  warnings(): readonly LogWarning[] {
    return this.loadWarnings;
  }

  close(): void {
    // With queued writes the lock is held until they have landed: no other writer sees a half log.
    this.log.close(() => this.lock?.release());
  }
}
