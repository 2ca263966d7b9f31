import { z } from 'zod';
import { MessageSchema, type Message } from '../messages/message.js';
import { memoryStore, ThreadEventSchema, type MemoryRecords } from '../store/index.js';
import { terminalOnUserError, type ObjectContext, type ObjectSharedContext, type RestateSdk } from './sdk.js';
import { archivedHistory, archiveHistories } from './session-archive.js';

/**
 * The object's records as a store for a session that runs elsewhere (`restateStore`): `records`
 * hands out everything, and `commitRecords` takes it back only when nobody committed since it
 * was handed out, so a second writer is refused instead of overwriting the first.
 */

/** Object state key of the records; the pre-compaction histories live in the archive object. */
export const RECORDS_KEY = 'records';
export type StoredRecords = Omit<MemoryRecords, 'artifacts'>;

const CommitInput = z.strictObject({
  /** How many events the writer's copy started from. */
  basedOn: z.number().int().nonnegative(),
  events: z.array(ThreadEventSchema),
  snapshots: z.record(z.string(), z.unknown()),
  /** Pre-compaction histories of boundaries added since. */
  artifacts: z.record(z.string(), z.array(MessageSchema)),
});

type Input = <T>(schema: z.ZodType<T>, value: unknown, where: string) => T;

export function storeHandlers(sdk: RestateSdk, name: string, input: Input) {
  const { exclusive, shared } = sdk.handlers.object;
  const load = async (ctx: ObjectSharedContext): Promise<StoredRecords> =>
    (await ctx.get<StoredRecords>(RECORDS_KEY)) ?? { events: [], snapshots: {} };
  return {
    records: shared(async (ctx: ObjectSharedContext): Promise<MemoryRecords> => {
      const records = await load(ctx);
      const artifacts: Record<string, Message[]> = {};
      for (const e of records.events)
        if (e.type === 'thread.compact_boundary')
          artifacts[e.id] = (await archivedHistory(ctx, name, e.id)) ?? [];
      return { ...records, artifacts };
    }),
    commitRecords: exclusive(async (ctx: ObjectContext, raw: unknown) => {
      const { basedOn, artifacts, ...next } = input(CommitInput, raw, 'commitRecords');
      const current = await load(ctx);
      if (current.events.length !== basedOn)
        throw new sdk.TerminalError(
          `${name}/${ctx.key}: the session changed since this writer loaded it (${current.events.length} events, not ${basedOn}); another writer holds it`,
          { errorCode: 409 },
        );
      // The whole record set must open as a store (event order, boundaries) before it is kept.
      terminalOnUserError(sdk, () => memoryStore({ ...next, artifacts }, `${name}/commitRecords: input`));
      await archiveHistories(ctx, name, artifacts);
      ctx.set(RECORDS_KEY, next);
      return { events: next.events.length };
    }),
  };
}
