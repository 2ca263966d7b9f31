import { readFileSync } from 'node:fs';
import type { AnyStateMachine, StateValue } from 'xstate';
import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { writeFileAtomicAsync } from '../io/atomic-write.js';
import { MessageSchema } from '../messages/message.js';
import { BaseJsonSchema, ListJsonSchema } from './checkpoint-refs.js';
import { WrittenRefSchema } from './checkpoint-written.js';
import { StoreJsonSchema, type StoreJson } from './message-store.js';

/**
 * Zod schema of a turn checkpoint file as written before checkpoints held references: the
 * persisted machine snapshot plus the whole message store. Such files still resume.
 */
export const WholeCheckpointSchema = z.object({
  version: z.literal(1),
  machine: z.enum(['turn', 'compaction']),
  turnId: z.string().min(1),
  /** Fields of the request that are not in the machine snapshot. */
  startedAt: z.number(),
  /** `actor.getPersistedSnapshot()`, JSON-safe by construction (refs and numbers only). */
  snapshot: z.record(z.string(), z.unknown()),
  store: StoreJsonSchema,
});

/** How the prompt cache stood, as checkpoints before the turn's context held it kept it (see `CacheCycle`). */
export const CacheCycleSchema = z.object({
  last: z.number(),
  maxStep: z.number(),
  afterPass: z.number(),
});

/**
 * Zod schema of a turn checkpoint by reference: the persisted machine snapshot, the turn's
 * message lists as runs into the session history the turn started from (which the event log
 * holds) plus the messages the turn wrote (by reference where they repeat the texts or the
 * history), the summary texts and finished provider calls. The
 * snapshot's context holds the prompt cache's cycle and the last request sent, so a resumed
 * turn decides as the uninterrupted one would.
 */
export const RefCheckpointSchema = z.object({
  /** 3 since the written messages may refer to the texts and the base (`writtenRefs`). */
  version: z.union([z.literal(2), z.literal(3)]),
  machine: z.enum(['turn', 'compaction']),
  turnId: z.string().min(1),
  startedAt: z.number(),
  snapshot: z.record(z.string(), z.unknown()),
  base: BaseJsonSchema,
  lists: z.record(z.string(), ListJsonSchema),
  /** The messages the turn wrote itself; list indexes past the base count into these. */
  written: z.array(MessageSchema),
  /** What written messages refer to instead of holding it, by position (see checkpoint-written.ts). */
  writtenRefs: z.record(z.string(), WrittenRefSchema).optional(),
  texts: z.record(z.string(), z.string()),
  results: z.record(z.string(), z.unknown()),
  /** Written by older versions; the snapshot's context holds it now. */
  cacheCycle: CacheCycleSchema.nullable().optional(),
});

/** Zod schema of a turn checkpoint: by reference, or whole as older versions wrote it. */
export const CheckpointSchema = z.discriminatedUnion('version', [WholeCheckpointSchema, RefCheckpointSchema]);
/** A checkpoint by reference (see {@link RefCheckpointSchema}). */
export type RefCheckpoint = z.infer<typeof RefCheckpointSchema>;
/** A checkpoint (see {@link CheckpointSchema}): by reference, or whole as older versions wrote it. */
export type Checkpoint =
  (z.infer<typeof WholeCheckpointSchema> & { store: StoreJson }) | z.infer<typeof RefCheckpointSchema>;

/** Writes a checkpoint atomically without blocking the event loop: a crash leaves the previous checkpoint or this one. */
export function saveCheckpoint(path: string, checkpoint: Checkpoint): Promise<void> {
  return writeFileAtomicAsync(path, `${JSON.stringify(checkpoint)}\n`);
}

/** Reads and validates a checkpoint; bad files are a one-line {@link UserError} naming the field. */
export function loadCheckpoint(path: string): Checkpoint {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UserError(`${path}: cannot read checkpoint (${e instanceof Error ? e.message : String(e)})`);
  }
  return parseCheckpoint(json, path);
}

/** Validates a checkpoint read from anywhere; a bad one is a one-line {@link UserError} naming `where` and the field. */
export function parseCheckpoint(json: unknown, where: string): Checkpoint {
  const parsed = CheckpointSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(
      `${where}: invalid checkpoint at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
    );
  }
  return parsed.data as Checkpoint;
}

/** Dot paths of the active leaves and their ancestors in a state value ('working.syncing' → working, working.syncing). */
function activePaths(value: StateValue, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix ? `${prefix}.${value}` : value];
  const out: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const path = prefix ? `${prefix}.${key}` : key;
    out.push(path);
    if (child !== undefined) out.push(...activePaths(child as StateValue, path));
  }
  return out;
}

/**
 * Checks that a persisted snapshot can be restored into `machine`: a known state value,
 * a context object, and — for an active snapshot — a persisted child for every actor the
 * active states invoke (without it the restored turn would wait forever). Throws a one-line
 * {@link UserError} naming `where`.
 */
export function validatePersistedSnapshot(machine: AnyStateMachine, snapshot: unknown, where: string): void {
  const s = snapshot as { status?: unknown; value?: unknown; context?: unknown; children?: unknown };
  if (s.status !== 'active' && s.status !== 'done')
    throw new UserError(`${where}: snapshot.status must be "active" or "done"`);
  if (typeof s.context !== 'object' || s.context === null)
    throw new UserError(`${where}: snapshot.context must be an object`);
  if (typeof s.value !== 'string' && (typeof s.value !== 'object' || s.value === null))
    throw new UserError(`${where}: snapshot.value must be a state value`);
  const children = (typeof s.children === 'object' && s.children !== null ? s.children : {}) as Record<
    string,
    unknown
  >;
  for (const path of activePaths(s.value as StateValue)) {
    let node;
    try {
      node = machine.getStateNodeById(`${machine.id}.${path}`);
    } catch {
      throw new UserError(`${where}: snapshot.value names an unknown state "${path}"`);
    }
    if (s.status !== 'active') continue;
    for (const inv of node.invoke)
      if (!(inv.id in children))
        throw new UserError(
          `${where}: snapshot is missing the in-flight actor "${inv.id}" of state "${path}"`,
        );
  }
}
