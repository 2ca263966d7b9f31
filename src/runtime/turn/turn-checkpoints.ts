import type { AnyActorRef } from 'xstate';
import { isPastFreeSteps, type TurnSnapshotView } from '../../../machines/index.js';
import { saveCheckpoint, type Checkpoint, type RefCheckpoint } from '../checkpoint.js';
import { historyPrint, ListEncoder } from '../checkpoint-refs.js';
import { WrittenEncoder } from '../checkpoint-written.js';
import type { MessageStore } from '../message-store.js';

/** What a turn's checkpoints refer to and where they go. */
export interface TurnCheckpointsOptions {
  turnId: string;
  startedAt: number;
  store: MessageStore;
  /** The store ref of the history the turn started from (the base of every list). */
  baseRef: string;
  /** Write each checkpoint here, atomically. */
  path?: string;
  /** Called with each checkpoint as it is taken, for a caller that keeps it elsewhere. */
  onCheckpoint?: (checkpoint: Checkpoint) => void;
  /** Runs once before the first file is written (a caller keeping the file it replaces). */
  beforeFirstWrite?: () => Promise<void>;
}

/**
 * The checkpoints of one turn, by reference (see checkpoint-refs.ts). Nothing is written while
 * the turn is still in its free steps; from the compaction pass on, every step is. Files are
 * written one after the other without blocking the event loop, a newer checkpoint replacing
 * one still waiting; `failed` rejects at the first write that fails, and `flush` waits for the
 * last one.
 */
export class TurnCheckpoints {
  /** Rejects with the error of the first failed write. */
  readonly failed: Promise<never>;
  private fail!: (e: unknown) => void;
  private error: { e: unknown } | null = null;
  private readonly encoder: ListEncoder;
  private readonly writtenEncoder: WrittenEncoder;
  private started = false;
  private writing: Promise<void> | null = null;
  private waiting: Checkpoint | null = null;
  private firstWrite = true;

  constructor(private readonly o: TurnCheckpointsOptions) {
    this.encoder = new ListEncoder(o.store.get(o.baseRef));
    this.writtenEncoder = new WrittenEncoder(o.store.get(o.baseRef));
    this.failed = new Promise<never>((_, reject) => (this.fail = reject));
    this.failed.catch(() => undefined); // observed by the caller's race; never unhandled
  }

  /**
   * Takes a checkpoint of the actor's snapshot when the turn is past its free steps (the
   * persisted snapshot, a copy of the whole context, is made only then).
   */
  offer(actor: AnyActorRef): void {
    if (this.error) throw this.error.e;
    if (!this.o.path && !this.o.onCheckpoint) return;
    this.started ||= isPastFreeSteps(actor.getSnapshot() as TurnSnapshotView);
    if (!this.started) return;
    const snapshot = actor.getPersistedSnapshot() as unknown as Record<string, unknown>;
    const checkpoint = this.build(snapshot);
    this.o.onCheckpoint?.(checkpoint);
    if (this.o.path) this.write(checkpoint);
  }

  /** Waits until every checkpoint taken is written; rejects when one failed. */
  async flush(): Promise<void> {
    while (this.writing) await this.writing;
    if (this.error) throw this.error.e;
  }

  private build(snapshot: Record<string, unknown>): RefCheckpoint {
    const { store, baseRef } = this.o;
    const base = store.get(baseRef);
    const lists: RefCheckpoint['lists'] = {};
    for (const [ref, list] of store.lists()) if (ref !== baseRef) lists[ref] = this.encoder.encode(list);
    const extras = store.extras();
    const { written, refs } = this.writtenEncoder.encode(this.encoder.written, extras.texts);
    return {
      version: 3,
      machine: 'turn',
      turnId: this.o.turnId,
      startedAt: this.o.startedAt,
      snapshot,
      base: { ref: baseRef, count: base.length, print: historyPrint(base) },
      lists,
      written,
      ...(Object.keys(refs).length > 0 ? { writtenRefs: refs } : {}),
      ...extras,
    };
  }

  private write(checkpoint: Checkpoint): void {
    if (this.writing) {
      this.waiting = checkpoint;
      return;
    }
    const path = this.o.path!;
    const before = this.firstWrite ? this.o.beforeFirstWrite : undefined;
    this.firstWrite = false;
    this.writing = (before ? before() : Promise.resolve())
      .then(() => saveCheckpoint(path, checkpoint))
      .then(
        () => {
          this.writing = null;
          const next = this.waiting;
          this.waiting = null;
          if (next && !this.error) this.write(next);
        },
        (e: unknown) => {
          this.writing = null;
          this.waiting = null;
          this.error = { e };
          this.fail(e);
        },
      );
  }
}
