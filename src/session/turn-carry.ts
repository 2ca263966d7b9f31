import { z } from 'zod';
import { CacheCycleSchema } from '../runtime/checkpoint.js';
import type { TurnCarry } from './session-runner.js';

/**
 * What a session's turns hand the next one (the loop guard's memory, the print of the request
 * the last turn ended with, the prompt cache's cycle), kept with the records: a session opened
 * afresh (a Restate object for every call, a session directory reopened) would otherwise decide
 * its next turn as a session's first (never waiting while the cached prefix holds) and compact
 * earlier than the same session kept open. A few hundred bytes, whatever the session's length.
 */

const LoopGuardSchema = z.strictObject({
  consecutiveFailures: z.number().int().nonnegative(),
  lastFreedRatio: z.number().nullable(),
  turnsSinceCompaction: z.number().int().nonnegative().nullable(),
});

const SentRequestSchema = z.strictObject({
  count: z.number().int().nonnegative(),
  print: z.string(),
  clearedCallIds: z.array(z.string()),
});

const TurnCarrySchema = z.strictObject({
  loopGuard: LoopGuardSchema,
  lastSent: SentRequestSchema.nullable().optional(),
  cacheCycle: CacheCycleSchema.nullable().optional(),
});

/** The carry kept, or undefined (none yet, or one this version cannot read: the next turn then starts afresh). */
export function keptCarry(kept: unknown): TurnCarry | undefined {
  const parsed = TurnCarrySchema.safeParse(kept);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The carry as a session's event log keeps it, on the commit line of a write: `startsTurn` when
 * a turn starts from it over the events before it (the turn's own outcome is then replayed on
 * open), else what the session held after those events.
 */
const LoggedCarrySchema = z.strictObject({ carry: z.unknown(), startsTurn: z.literal(true).optional() });

/** The note a write keeps for `carry`. */
export function loggedCarry(carry: TurnCarry, startsTurn: boolean): z.infer<typeof LoggedCarrySchema> {
  return startsTurn ? { carry, startsTurn } : { carry };
}

/** The carry a log kept, and whether a turn started from it; undefined when this version cannot read it. */
export function readLoggedCarry(kept: unknown): { carry: TurnCarry; startsTurn: boolean } | undefined {
  // Every turn asks about the note the log kept last: checked once per note, not once per turn.
  const known = typeof kept === 'object' && kept !== null ? readNotes.get(kept) : undefined;
  if (known !== undefined) return known.read;
  const parsed = LoggedCarrySchema.safeParse(kept);
  const carry = parsed.success ? keptCarry(parsed.data.carry) : undefined;
  const read = carry && { carry, startsTurn: parsed.data?.startsTurn === true };
  if (typeof kept === 'object' && kept !== null) readNotes.set(kept, { read });
  return read;
}

const readNotes = new WeakMap<object, { read: { carry: TurnCarry; startsTurn: boolean } | undefined }>();
