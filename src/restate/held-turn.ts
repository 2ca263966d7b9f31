import { z } from 'zod';
import { MessageSchema } from '../messages/message.js';
import { ThreadEventSchema, type MemoryRecords } from '../store/index.js';
import { keepLastSent, LAST_SENT_KEY, type LastSent } from './last-sent.js';
import type { ObjectContext } from './sdk.js';
import { archiveHistories } from './session-archive.js';
import {
  keepRecords,
  loadRecords,
  RECORDS_KEY,
  type RecordsNotes,
  type StoredRecords,
} from './working-records.js';

/**
 * A turn run for a proxy is held until its request is answered, worked out with every step
 * recorded (a worker or proxy that dies loses nothing). One that writes nothing to the archive
 * (most turns: no compaction) is written at once, as a turn that was not held is written, so
 * every reader sees it as soon as the answer can go out; what it replaced is kept under
 * {@link UNDO_KEY} until the next turn, and nothing needs to say that the request was
 * answered: only a failed one is settled (`keep: false`), which puts the records back as they
 * were. One that compacted is kept aside under {@link HELD_KEY} and written by `settleTurn`, so
 * its archive writes do not delay the answer. A turn put back or kept aside stays there for
 * the same request again, whose summary is then not paid twice; the next held turn replaces it.
 */

/** State key of a turn put back (its request failed), kept aside for the same request again. */
export const HELD_KEY = 'held';
/** State key of what the last held turn replaced, until the next turn makes it final. */
export const UNDO_KEY = 'heldUndo';
/** State key of the name of the last held turn kept. */
const KEPT_KEY = 'keptTurn';

const HeldSchema = z.strictObject({
  /** Names the turn: only a settle call with this name settles it. */
  turn: z.string().min(1),
  /** The records it was worked out on: it is kept only onto those very records. */
  base: z.strictObject({ offset: z.number().int().nonnegative(), events: z.number().int().nonnegative() }),
  /** What it adds to the records: its events, the snapshots after it, new histories for the archive. */
  events: z.array(ThreadEventSchema),
  snapshots: z.record(z.string(), z.unknown()),
  artifacts: z.record(z.string(), z.array(MessageSchema)),
  /** The notes the records keep with it (read back and checked by their own readers). */
  notes: z.strictObject({ summaryCache: z.unknown().optional(), carry: z.unknown().optional() }),
  /** The request it built, to keep as the last one sent (null: forget it; absent: leave it). */
  lastSent: z.unknown().optional(),
});
type Held = z.infer<typeof HeldSchema>;

/**
 * A held turn written at once (it moved nothing to the archive, so the records' events are
 * those before it and then its own), and what it replaced: enough to put the records back.
 */
const UndoSchema = z.strictObject({
  turn: z.string().min(1),
  /** The records it was written onto: their first `events` events are the ones before it. */
  base: HeldSchema.shape.base,
  /** How many events the records held once it was written. */
  written: z.number().int().nonnegative(),
  /** The snapshots and notes of the records before it (null: there were none). */
  before: z
    .strictObject({ snapshots: z.record(z.string(), z.unknown()), ...HeldSchema.shape.notes.shape })
    .nullable(),
  /** The last request sent before it (null: none), and the one it built (absent: the same). */
  lastSentBefore: z.unknown(),
  lastSent: z.unknown().optional(),
});
type Undo = z.infer<typeof UndoSchema>;

/** Keeps a worked-out turn aside as `turn`, in place of any held before, until `settleHeldTurn` keeps it. */
export function holdTurn(
  ctx: ObjectContext,
  turn: string,
  loaded: StoredRecords,
  { after, notes, lastSent }: HeldParts,
): void {
  const base = { offset: loaded.offset ?? 0, events: loaded.events.length };
  const held: Held = {
    turn,
    base,
    events: after.events.slice(base.events),
    snapshots: after.snapshots,
    artifacts: after.artifacts,
    notes,
    ...(lastSent !== undefined ? { lastSent } : {}),
  };
  ctx.clear(UNDO_KEY);
  ctx.set<Held>(HELD_KEY, held);
}

/** The parts of a held turn: its events, snapshots, histories and notes, and the request it built. */
export interface HeldParts {
  after: MemoryRecords;
  notes: RecordsNotes;
  lastSent: LastSent | null | undefined;
}

/**
 * Writes a worked-out turn named `turn` that moves nothing to the archive (through `save`, as
 * an unheld one is written) and keeps what it replaced, in place of any turn held before.
 */
export async function writeHeldTurn(
  ctx: ObjectContext,
  turn: string,
  loaded: StoredRecords,
  lastSent: LastSent | null | undefined,
  save: () => Promise<void>,
): Promise<void> {
  const existed = (await ctx.get<unknown>(RECORDS_KEY)) !== null;
  const { snapshots, summaryCache, carry } = loaded;
  await save();
  const undo: Undo = {
    turn,
    base: { offset: loaded.offset ?? 0, events: loaded.events.length },
    written: (await loadRecords(ctx)).events.length,
    before: existed
      ? { snapshots, ...(summaryCache ? { summaryCache } : {}), ...(carry ? { carry } : {}) }
      : null,
    lastSentBefore: (await ctx.get<unknown>(LAST_SENT_KEY)) ?? null,
    ...(lastSent !== undefined ? { lastSent } : {}),
  };
  if (lastSent !== undefined) keepLastSent(ctx, lastSent);
  ctx.clear(HELD_KEY);
  ctx.set<Undo>(UNDO_KEY, undo);
}

/** The next turn builds on the last held one: what it replaced is no longer needed. */
export function finalHeldTurn(ctx: ObjectContext): void {
  ctx.clear(UNDO_KEY);
}

/**
 * Settles held turn `turn`. Dropped while it is written, the records go back to what they were
 * (when nothing was written after it) and the turn is kept aside; dropped once more, it is
 * forgotten. Kept while it is written, nothing changes; kept once aside, it is written again
 * onto the records it was worked out on. Whether it is kept after the call.
 */
export async function settleHeldTurn(
  ctx: ObjectContext,
  name: string,
  { turn, keep }: { turn: string; keep: boolean },
): Promise<boolean> {
  const undo = UndoSchema.safeParse(await ctx.get<unknown>(UNDO_KEY));
  if (undo.success && undo.data.turn === turn) {
    if (keep) return true;
    return !(await putBack(ctx, undo.data));
  }
  const parsed = HeldSchema.safeParse(await ctx.get<unknown>(HELD_KEY));
  // Asked again (a caller retried after its first call went through), it answers the same.
  if (!parsed.success || parsed.data.turn !== turn) return (await ctx.get<unknown>(KEPT_KEY)) === turn;
  const held = parsed.data;
  ctx.clear(HELD_KEY);
  if (!keep) return false;
  const loaded = await loadRecords(ctx);
  const { base } = held;
  if ((loaded.offset ?? 0) !== base.offset || loaded.events.length !== base.events) return false;
  await archiveHistories(ctx, name, held.artifacts);
  const next = {
    events: [...loaded.events, ...held.events],
    snapshots: held.snapshots,
    ...(base.offset > 0 ? { offset: base.offset } : {}),
  };
  await keepRecords(ctx, name, loaded, next, held.notes as RecordsNotes);
  if (held.lastSent !== undefined) keepLastSent(ctx, held.lastSent as LastSent | null);
  ctx.set(KEPT_KEY, turn);
  return true;
}

/**
 * Puts the records back as they were before a held turn and keeps the turn aside; refused
 * (false) when something was written after it, which then builds on it.
 */
async function putBack(ctx: ObjectContext, undo: Undo): Promise<boolean> {
  ctx.clear(UNDO_KEY);
  const records = await loadRecords(ctx);
  const { base, before } = undo;
  if ((records.offset ?? 0) !== base.offset || records.events.length !== undo.written) return false;
  const held: Held = {
    turn: undo.turn,
    base,
    events: records.events.slice(base.events),
    snapshots: records.snapshots,
    artifacts: {},
    notes: {
      ...(records.summaryCache ? { summaryCache: records.summaryCache } : {}),
      ...(records.carry ? { carry: records.carry } : {}),
    },
    ...(undo.lastSent !== undefined ? { lastSent: undo.lastSent } : {}),
  };
  if (before === null) ctx.clear(RECORDS_KEY);
  else {
    const { summaryCache: _cache, carry: _carry, ...kept } = records;
    ctx.set<StoredRecords>(RECORDS_KEY, {
      ...kept,
      events: records.events.slice(0, base.events),
      ...(before as Pick<StoredRecords, 'snapshots' | 'summaryCache' | 'carry'>),
    });
  }
  if (undo.lastSentBefore === null) ctx.clear(LAST_SENT_KEY);
  else ctx.set(LAST_SENT_KEY, undo.lastSentBefore);
  ctx.set<Held>(HELD_KEY, held);
  return true;
}
