import { z } from 'zod';
import { CacheCycleSchema } from '../runtime/checkpoint.js';
import type { TurnCarry } from '../session/session-runner.js';

/**
 * What a session's turns hand the next one (the loop guard's memory, the print of the request
 * the last turn ended with, the prompt cache's cycle), kept with the records: the object opens
 * a fresh session for every call, and without it each turn would decide as a session's first
 * (never waiting while the cached prefix holds), so a session on Restate would compact earlier
 * than the same session in memory. A few hundred bytes, whatever the session's length.
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
