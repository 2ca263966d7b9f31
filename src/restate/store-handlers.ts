import { z } from 'zod';
import { MessageSchema, type Message } from '../messages/message.js';
import { memoryStore, ThreadEventSchema, type MemoryRecords } from '../store/index.js';
import { terminalOnUserError, type ObjectContext, type ObjectSharedContext, type RestateSdk } from './sdk.js';
import { archivedHistory, archiveHistories } from './session-archive.js';
import { eventCount, keepRecords, loadRecords, storeRecords } from './working-records.js';

/**
 * The object's records as a store for a session that runs elsewhere (`restateStore`): `records`
 * hands out the working records (the events from the last boundary on, and that boundary's
 * history), and `commitRecords` takes them back only when nobody committed since they were
 * handed out, so a second writer is refused instead of overwriting the first.
 */

const CommitInput = z.strictObject({
  /** How many events the session had when the writer's copy was loaded. */
  basedOn: z.number().int().nonnegative(),
  /** Events before `events[0]`, kept in the archive. */
  offset: z.number().int().nonnegative().optional(),
  events: z.array(ThreadEventSchema),
  snapshots: z.record(z.string(), z.unknown()),
  /** Pre-compaction histories of boundaries added since. */
  artifacts: z.record(z.string(), z.array(MessageSchema)),
});

type Input = <T>(schema: z.ZodType<T>, value: unknown, where: string) => T;

export function storeHandlers(sdk: RestateSdk, name: string, input: Input) {
  const { exclusive, shared } = sdk.handlers.object;
  return {
    records: shared(async (ctx: ObjectSharedContext): Promise<MemoryRecords> => {
      const records = await loadRecords(ctx);
      const artifacts: Record<string, Message[]> = {};
      for (const e of records.events)
        if (e.type === 'thread.compact_boundary')
          artifacts[e.id] = (await archivedHistory(ctx, name, e.id)) ?? [];
      return { ...storeRecords(records), artifacts };
    }),
    commitRecords: exclusive(async (ctx: ObjectContext, raw: unknown) => {
      const { basedOn, artifacts, ...next } = input(CommitInput, raw, 'commitRecords');
      const current = await loadRecords(ctx);
      const archived = (current.offset ?? 0) - (next.offset ?? 0);
      if (eventCount(current) !== basedOn || archived < 0)
        throw new sdk.TerminalError(
          `${name}/${ctx.key}: the session changed since this writer loaded it (${eventCount(current)} events, not ${basedOn}); another writer holds it`,
          { errorCode: 409 },
        );
      // The writer's copy may still hold events this object has since moved to the archive
      // (when its own last save compacted): they are the same ones, as nobody committed since.
      if (archived > 0) Object.assign(next, { events: next.events.slice(archived), offset: current.offset });
      // The whole record set must open as a store (event order, boundaries) before it is kept.
      terminalOnUserError(sdk, () => memoryStore({ ...next, artifacts }, `${name}/commitRecords: input`));
      await archiveHistories(ctx, name, artifacts);
      await keepRecords(ctx, name, current, next);
      return { events: (next.offset ?? 0) + next.events.length };
    }),
  };
}
