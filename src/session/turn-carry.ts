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

/** Snapshot name of the carry a session directory keeps when its session closes. */
export const CARRY_SNAPSHOT = 'carry';

/** The carry as a session directory keeps it: with the number of log events it follows. */
const KeptCarrySchema = z.strictObject({ events: z.number().int().nonnegative(), carry: z.unknown() });

/** The kept record for `carry` after `events` log events. */
export function carryRecord(events: number, carry: TurnCarry): z.infer<typeof KeptCarrySchema> {
  return { events, carry };
}

/**
 * The carry a session directory kept, when it follows exactly the `events` the log holds now
 * (a log that grew after it, by a later opening that could not close, makes it stale).
 */
export function keptDirCarry(kept: unknown, events: number): TurnCarry | undefined {
  const parsed = KeptCarrySchema.safeParse(kept);
  return parsed.success && parsed.data.events === events ? keptCarry(parsed.data.carry) : undefined;
}
