import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { StoreJsonSchema, type StoreJson } from './message-store.js';

/** Zod schema of a turn checkpoint file: the persisted machine snapshot plus the message store. */
export const CheckpointSchema = z.object({
  version: z.literal(1),
  machine: z.enum(['turn', 'compaction']),
  turnId: z.string().min(1),
  /** Fields of the request that are not in the machine snapshot. */
  startedAt: z.number(),
  /** `actor.getPersistedSnapshot()`, JSON-safe by construction (refs and numbers only). */
  snapshot: z.record(z.string(), z.unknown()),
  store: StoreJsonSchema,
});
/** A checkpoint (see {@link CheckpointSchema}). */
export type Checkpoint = z.infer<typeof CheckpointSchema> & { store: StoreJson };

/** Writes a checkpoint atomically: a crash leaves the previous checkpoint or this one. */
export function saveCheckpoint(path: string, checkpoint: Checkpoint): void {
  writeFileAtomic(path, `${JSON.stringify(checkpoint)}\n`);
}

/** Reads and validates a checkpoint; bad files are a one-line {@link UserError} naming the field. */
export function loadCheckpoint(path: string): Checkpoint {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UserError(`${path}: cannot read checkpoint (${e instanceof Error ? e.message : String(e)})`);
  }
  const parsed = CheckpointSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `${path}: invalid checkpoint at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    );
  }
  return parsed.data;
}
