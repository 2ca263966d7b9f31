import type { Message } from '../messages/message.js';
import type { Checkpoint } from '../runtime/checkpoint.js';
import type { ObjectContext, ObjectSharedContext } from './sdk.js';

/**
 * The turn in flight kept as object state, as a machine run as a virtual object keeps its
 * snapshot: the turn machine's checkpoint at its last settled step, cleared when the turn
 * ends. Any worker (and the `state` handler) can see where a turn is, and a turn left by a
 * call that ended without committing continues from it instead of starting over.
 */

/** State key of the turn in flight. */
export const TURN_KEY = 'turn';

/** What {@link TURN_KEY} holds: the checkpoint, and the pending messages it was started with. */
interface InFlightTurn {
  pending: Message[];
  step: number;
  /** Calls that continued this turn after the one that started it ended without committing. */
  resumes: number;
  checkpoint: Checkpoint;
}

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

/** Where the turn of this call starts (a kept checkpoint of the same request) and how its steps are kept. */
export async function keepTurnInFlight(ctx: ObjectContext, pending: Message[]) {
  const saved = await ctx.get<InFlightTurn>(TURN_KEY);
  const resumeFrom =
    saved && JSON.stringify(saved.pending) === JSON.stringify(pending) ? saved.checkpoint : undefined;
  let step = resumeFrom ? saved!.step : 0;
  let lastValue = resumeFrom ? JSON.stringify(resumeFrom.snapshot.value) : '';
  const resumes = resumeFrom ? saved!.resumes + 1 : 0;
  if (resumeFrom) ctx.set<InFlightTurn>(TURN_KEY, { ...saved!, resumes });
  // Written when the machine's state changes, not on every event inside one state.
  const onCheckpoint = (checkpoint: Checkpoint) => {
    const value = JSON.stringify(checkpoint.snapshot.value);
    if (value === lastValue) return;
    lastValue = value;
    ctx.set<InFlightTurn>(TURN_KEY, { pending, step: ++step, resumes, checkpoint });
  };
  return { onCheckpoint, ...(resumeFrom ? { resumeFrom } : {}) };
}

/** The turn in flight, or null between turns. */
export async function turnInFlight(ctx: ObjectSharedContext): Promise<InFlightTurnView | null> {
  const saved = await ctx.get<InFlightTurn>(TURN_KEY);
  if (!saved) return null;
  const { checkpoint, step, resumes } = saved;
  return { turnId: checkpoint.turnId, value: checkpoint.snapshot.value, step, resumes };
}
