import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MessageSchema, type Message } from '../messages/message.js';
import { CheckpointSchema, type Checkpoint } from '../runtime/checkpoint.js';
import type { ObjectContext, ObjectSharedContext } from './sdk.js';

/**
 * The turn in flight kept as object state, as a machine run as a virtual object keeps its
 * snapshot: the turn machine's checkpoint at its last settled step, cleared when the turn
 * ends. Any worker (and the `state` handler) can see where a turn is, and a turn left by a
 * call that ended without committing continues from it instead of starting over.
 *
 * A checkpoint's message lists are kept as indexes: into the turn's input (the session's
 * history plus the pending messages, which the object's records give back on any worker),
 * or into a short table of the messages the turn wrote itself (a summary). So each step
 * writes a few kilobytes instead of the whole conversation again.
 */

/** State key of the turn in flight. */
export const TURN_KEY = 'turn';

/** A checkpoint with its message lists written as indexes (see above). */
const PackedCheckpointSchema = z.object({
  version: z.literal(1),
  machine: z.enum(['turn', 'compaction']),
  turnId: z.string(),
  startedAt: z.number(),
  snapshot: z.record(z.string(), z.unknown()),
  store: z
    .object({
      lists: z.record(z.string(), z.array(z.number().int().nonnegative())),
      written: z.array(MessageSchema),
    })
    .passthrough(),
});

/** What {@link TURN_KEY} holds. */
const InFlightTurnSchema = z.object({
  pending: z.array(MessageSchema),
  /** Fingerprint of the turn's input: a continued turn must start from the very same one. */
  input: z.string(),
  step: z.number().int().nonnegative(),
  /** Calls that continued this turn after the one that started it ended without committing. */
  resumes: z.number().int().nonnegative(),
  checkpoint: PackedCheckpointSchema,
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

/** Writes a checkpoint's message lists as indexes into `input`, then into the messages the turn wrote. */
function pack(
  checkpoint: Checkpoint,
  input: { length: number; index: Map<string, number> },
): InFlightTurn['checkpoint'] {
  const { messages, ...rest } = checkpoint.store;
  const written: Message[] = [];
  const writtenIndex = new Map<string, number>();
  const indexOf = (m: Message) => {
    const json = JSON.stringify(m);
    const known = input.index.get(json) ?? writtenIndex.get(json);
    if (known !== undefined) return known;
    const index = input.length + written.push(m) - 1;
    writtenIndex.set(json, index);
    return index;
  };
  const lists = Object.fromEntries(Object.entries(messages).map(([ref, list]) => [ref, list.map(indexOf)]));
  return { ...checkpoint, store: { ...rest, lists, written } };
}

/** The checkpoint {@link pack} wrote, whole again; undefined when it does not read back as one. */
function unpack(packed: InFlightTurn['checkpoint'], input: readonly Message[]): Checkpoint | undefined {
  const { lists, written, ...rest } = packed.store;
  const all = [...input, ...written];
  const messages: Record<string, Message[]> = {};
  for (const [ref, indexes] of Object.entries(lists)) {
    if (indexes.some((i) => i >= all.length)) return undefined;
    messages[ref] = indexes.map((i) => all[i]!);
  }
  const parsed = CheckpointSchema.safeParse({ ...packed, store: { ...rest, messages } });
  return parsed.success ? parsed.data : undefined;
}

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
      ? unpack(saved.checkpoint, input)
      : undefined;
  const resumes = resumeFrom ? saved!.resumes + 1 : 0;
  if (resumeFrom) ctx.set<InFlightTurn>(TURN_KEY, { ...saved!, resumes });
  const index = new Map<string, number>();
  input.forEach((m, i) => {
    const json = JSON.stringify(m);
    if (!index.has(json)) index.set(json, i);
  });
  let step = resumeFrom ? saved!.step : 0;
  let lastValue = resumeFrom ? JSON.stringify(resumeFrom.snapshot.value) : '';
  // Written when the machine's state changes, not on every event inside one state.
  const onCheckpoint = (checkpoint: Checkpoint) => {
    const value = JSON.stringify(checkpoint.snapshot.value);
    if (value === lastValue) return;
    lastValue = value;
    ctx.set<InFlightTurn>(TURN_KEY, {
      pending,
      input: inputPrint,
      step: ++step,
      resumes,
      checkpoint: pack(checkpoint, { length: input.length, index }),
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
