import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { MessageSchema, type Message } from '../messages/message.js';
import { ThreadEventSchema, type CompactBoundary, type ThreadEvent } from './events.js';
import type { LogWarning } from './load-event-log.js';
import { boundaryEvent, checkName, replayEvents, toInfo } from './open-store.js';
import type { BoundaryInfo, CompactionRecord, SessionStore, SessionStoreSource } from './session-store.js';

/**
 * A session store held in memory as plain JSON data: the same events, boundaries and
 * pre-compaction histories as a session directory, for a caller that keeps them somewhere
 * else (the state of a durable-execution server, a database row). Whoever holds the records
 * is the one writer; nothing here locks.
 */

/** Everything a memory store holds, as JSON. Only committed events are in it. */
export interface MemoryRecords {
  events: ThreadEvent[];
  /** The full live history before each boundary, by boundary id. */
  artifacts: Record<string, Message[]>;
  snapshots: Record<string, unknown>;
  /**
   * Events kept elsewhere before `events[0]` (0 or absent: the log is whole). The live history
   * needs only the events from the last boundary on, so a long session keeps older ones apart.
   */
  offset?: number;
}

const MemoryRecordsSchema = z.strictObject({
  events: z.array(ThreadEventSchema),
  artifacts: z.record(z.string(), z.array(MessageSchema)),
  snapshots: z.record(z.string(), z.unknown()),
  offset: z.number().int().nonnegative().optional(),
});

/** A memory store and the source that opens it (one writer at a time, for the session API). */
export interface MemoryStore extends SessionStore, SessionStoreSource {
  /** The committed records, to keep: pending messages are not in them. */
  records(): MemoryRecords;
}

/** A memory store starting from `records` (validated: they come from outside the process). */
export function memoryStore(records?: unknown, where = 'memoryStore: records'): MemoryStore {
  const parsed = MemoryRecordsSchema.safeParse(records ?? { events: [], artifacts: {}, snapshots: {} });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new UserError(`${where}.${issue.path.map(String).join('.')}: ${issue.message}`);
  }
  return new MemoryStoreImpl(parsed.data as MemoryRecords);
}

class MemoryStoreImpl implements MemoryStore {
  private readonly events_: ThreadEvent[];
  private readonly artifacts: Map<string, Message[]>;
  private readonly snapshots: Map<string, unknown>;
  private readonly boundaries = new Map<string, CompactBoundary>();
  private live: Message[];
  /** Events at the end of the list that are not committed yet. */
  private pending = 0;
  private opened = false;
  private offset: number;

  constructor(records: MemoryRecords) {
    this.offset = records.offset ?? 0;
    this.events_ = records.events.slice();
    this.artifacts = new Map(Object.entries(records.artifacts));
    this.snapshots = new Map(Object.entries(records.snapshots));
    this.live = replayEvents(this.events_, this.boundaries);
  }

  open({ startOver }: { startOver?: boolean }): SessionStore {
    if (this.opened) throw new UserError('memoryStore: the store already has a writer');
    this.opened = true;
    if (startOver) {
      this.events_.length = 0;
      this.offset = 0;
      this.artifacts.clear();
      this.snapshots.clear();
      this.live = replayEvents(this.events_, this.boundaries);
    }
    return this;
  }

  records(): MemoryRecords {
    return {
      events: this.events_.slice(0, this.events_.length - this.pending),
      artifacts: Object.fromEntries(this.artifacts),
      snapshots: Object.fromEntries(this.snapshots),
      ...(this.offset > 0 ? { offset: this.offset } : {}),
    };
  }

  appendMessages(messages: readonly Message[], opts: { commit?: boolean } = {}): void {
    const at = new Date().toISOString();
    for (const message of messages)
      this.events_.push({
        type: 'message.appended',
        seq: this.offset + this.events_.length + 1,
        at,
        message,
      });
    this.live.push(...messages);
    this.pending = (opts.commit ?? true) ? 0 : this.pending + messages.length;
  }

  commit(): void {
    this.pending = 0;
  }

  rollback(): number {
    const dropped = this.pending;
    if (dropped > 0) {
      this.events_.length -= dropped;
      this.pending = 0;
      this.live = replayEvents(this.events_, this.boundaries);
    }
    return dropped;
  }

  recordCompaction(record: CompactionRecord): BoundaryInfo {
    const event = boundaryEvent(this.offset + this.events_.length + 1, new Date().toISOString(), record);
    // The pre-compaction history is kept before the boundary that refers to it.
    this.artifacts.set(event.id, record.before.slice());
    this.events_.push(event);
    this.pending = 0;
    this.boundaries.set(event.id, event);
    this.live = record.after.slice();
    return toInfo(event);
  }

  loadHistory(): Message[] {
    return this.live.slice();
  }

  listBoundaries(): BoundaryInfo[] {
    return [...this.boundaries.values()].map(toInfo);
  }

  restoreAt(id: string): Message[] {
    checkName('boundary', id);
    const history = this.boundaries.has(id) ? this.artifacts.get(id) : undefined;
    if (!history) throw new UserError(`no compaction boundary '${id}' (listBoundaries() lists them)`);
    return history.slice();
  }

  events(): readonly ThreadEvent[] {
    return this.events_;
  }

  saveSnapshot(name: string, snapshot: unknown): void {
    checkName('snapshot', name);
    this.snapshots.set(name, JSON.parse(JSON.stringify(snapshot)) as unknown);
  }

  loadSnapshot(name: string): unknown {
    checkName('snapshot', name);
    return this.snapshots.get(name);
  }

  warnings(): readonly LogWarning[] {
    return [];
  }

  close(): void {
    this.rollback();
    this.opened = false;
  }
}
