import { z } from 'zod';
import { MessageSchema } from '../messages/message.js';
import { ThreadEventSchema, type MemoryRecords } from '../store/index.js';
import { keepLastSent, type LastSent } from './last-sent.js';
import type { ObjectContext } from './sdk.js';
import { archiveHistories } from './session-archive.js';
import { keepRecords, loadRecords, type RecordsNotes, type StoredRecords } from './working-records.js';

/**
 * A turn run for a proxy is held: the session object works it out (every step recorded, so a
 * worker or proxy that dies loses nothing) but keeps its outcome beside the session's records,
 * under {@link HELD_KEY}, until the caller settles it. Kept, it is written as a turn that was
 * not held writes it; dropped, or replaced by the next held turn, the records stay as they
 * were. The session's history, its archive and every reader see nothing of it until then.
 */

/** State key of the held turn. */
export const HELD_KEY = 'held';
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

/** Keeps a worked-out turn aside as `turn`, in place of any held before. */
export function holdTurn(
  ctx: ObjectContext,
  turn: string,
  loaded: StoredRecords,
  after: MemoryRecords,
  notes: RecordsNotes,
  lastSent: LastSent | null | undefined,
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
  ctx.set<Held>(HELD_KEY, held);
}

/**
 * Settles held turn `turn`: kept, its histories go to the archive and its events onto the
 * records (only when they are still the ones it was worked out on); dropped, it is forgotten.
 * Whether it was kept; a turn not held (settled already, or replaced) is left alone.
 */
export async function settleHeldTurn(
  ctx: ObjectContext,
  name: string,
  { turn, keep }: { turn: string; keep: boolean },
): Promise<boolean> {
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
