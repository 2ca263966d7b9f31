import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MessageSchema, type Message } from '../messages/message.js';
import { RefCheckpointSchema, type Checkpoint } from '../runtime/checkpoint.js';
import type { ObjectContext, ObjectSharedContext } from './sdk.js';

/**
 * The turn in flight kept as object state, as a machine run as a virtual object keeps its
 * snapshot: the turn machine's checkpoint at its last settled step, cleared when the turn
 * ends. Any worker (and the `state` handler) can see where a turn is, and a turn left by a
 * call that ended without committing continues from it instead of starting over.
 *
 * A checkpoint refers to the turn's input (the session's history plus the pending messages,
 * which the object's records give back on any worker) and holds only the messages the turn
 * wrote itself (a summary), so each step writes a few kilobytes instead of the whole
 * conversation again.
 */

/** State key of the turn in flight. */
export const TURN_KEY = 'turn';

/** What {@link TURN_KEY} holds. */
const InFlightTurnSchema = z.object({
  pending: z.array(MessageSchema),
  /** Fingerprint of the turn's input: a continued turn must start from the very same one. */
  input: z.string(),
  step: z.number().int().nonnegative(),
  /** Calls that continued this turn after the one that started it ended without committing. */
  resumes: z.number().int().nonnegative(),
  checkpoint: RefCheckpointSchema,
});
type InFlightTurn = z.infer<typeof InFlightTurnSchema>;

/** The turn in flight as the `state` handler shows it. */
export interface InFlightTurnView {
  turnId: string;
  /** The turn machine's state value at its last settled step. */
  value: unknown;
  /** Steps settled so far. */
  step: number;
  /** Calls that continued this turn after the one that started it ended without committing. */
  resumes: number;
}

/** The kept turn, or undefined when there is none or it cannot be read (then the turn starts over). */
async function savedTurn(ctx: ObjectSharedContext): Promise<InFlightTurn | undefined> {
  const parsed = InFlightTurnSchema.safeParse(await ctx.get<unknown>(TURN_KEY));
  return parsed.success ? parsed.data : undefined;
}

const fingerprint = (messages: readonly Message[]) =>
  createHash('sha256').update(JSON.stringify(messages)).digest('hex');

/**
 * Where the turn of this call starts and how its steps are kept. A kept turn is continued when
 * it was started with the same pending messages on the same history (`input`: the session's
 * history with the pending messages after it); it is marked as continued right away, before the
 * call's first recorded step, so the mark is in the object's state before any provider call.
 */
export async function keepTurnInFlight(ctx: ObjectContext, pending: Message[], input: readonly Message[]) {
  const saved = await savedTurn(ctx);
  const inputPrint = fingerprint(input);
  const resumeFrom =
    saved !== undefined &&
    saved.input === inputPrint &&
    JSON.stringify(saved.pending) === JSON.stringify(pending)
      ? saved.checkpoint
      : undefined;
  const resumes = resumeFrom ? saved!.resumes + 1 : 0;
  if (resumeFrom) ctx.set<InFlightTurn>(TURN_KEY, { ...saved!, resumes });
  let step = resumeFrom ? saved!.step : 0;
  let lastValue = resumeFrom ? JSON.stringify(resumeFrom.snapshot.value) : '';
  // Written when the machine's state changes, not on every event inside one state.
  const onCheckpoint = (checkpoint: Checkpoint) => {
    // A turn writes its checkpoints by reference; a whole one (an older version's) is not kept.
    if (checkpoint.version === 1) return;
    const value = JSON.stringify(checkpoint.snapshot.value);
    if (value === lastValue) return;
    lastValue = value;
    ctx.set<InFlightTurn>(TURN_KEY, {
      pending,
      input: inputPrint,
      step: ++step,
      resumes,
      checkpoint,
    });
  };
  return { onCheckpoint, ...(resumeFrom ? { resumeFrom } : {}) };
}

/** The turn in flight, or null between turns. */
export async function turnInFlight(ctx: ObjectSharedContext): Promise<InFlightTurnView | null> {
  const saved = await savedTurn(ctx);
  if (!saved) return null;
  const { checkpoint, step, resumes } = saved;
  return { turnId: checkpoint.turnId, value: checkpoint.snapshot.value, step, resumes };
}
