import { z } from 'zod';
import { MessageSchema, type Message } from '../messages/message.js';
import { ThreadEventSchema, type ThreadEvent } from '../store/index.js';
import {
  checkedInput,
  type ObjectContext,
  type ObjectSharedContext,
  type RestateSdk,
  type ServiceDefinition,
} from './sdk.js';

/**
 * The full history before each compaction, kept out of the session object's own state. Restate
 * hands an object its whole state with every call, and over HTTP/1.1 again with every recorded
 * step of a turn; a session that compacted a dozen times would carry a dozen old histories
 * (over 100 KB each) into every step. So each history lives in its own small object, keyed
 * `<session>/<boundary>`, that is only called when a compaction writes it and when someone
 * restores it.
 *
 * The session writes it with an awaited call, a recorded step: a turn retried after its
 * worker died reads the call back instead of writing again, and the history is there before
 * the session's records name its boundary, so `restore` right after a turn finds it.
 */

/** Name of the archive object of session object `name`. */
export const archiveName = (name: string) => `${name}Archive`;

/** Key of one archived history: the session id, then the boundary id (which holds no `/`). */
export const archiveKey = (session: string, boundary: string) => `${session}/${boundary}`;

/** State key the session object kept a history under before the archive existed. */
export const legacyArtifactKey = (boundary: string) => `artifact:${boundary}`;

/** Key of the chunk of a session's older events that starts at event `start` (1, 2, 3 …). */
export const chunkKey = (session: string, start: number) =>
  `${session}/events-${String(start).padStart(6, '0')}`;

const HISTORY_KEY = 'history';
const EVENTS_KEY = 'events';
const PutInput = z.array(MessageSchema);
const PutEventsInput = z.array(ThreadEventSchema);

/**
 * The archive object: `put` (exclusive) keeps a history, `get` (shared) answers it or null;
 * `putEvents` and `events` do the same for a chunk of a session's older events.
 */
export function sessionArchive(sdk: RestateSdk, name: string): ServiceDefinition {
  const { exclusive, shared } = sdk.handlers.object;
  const input = checkedInput(sdk, archiveName(name));
  return sdk.object({
    name: archiveName(name),
    handlers: {
      put: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        const history = input(PutInput, raw, 'put');
        ctx.set(HISTORY_KEY, history);
        return { messages: history.length };
      }),
      get: shared(async (ctx: ObjectSharedContext) => (await ctx.get<Message[]>(HISTORY_KEY)) ?? null),
      putEvents: exclusive(async (ctx: ObjectContext, raw: unknown) => {
        const events = input(PutEventsInput, raw, 'putEvents');
        ctx.set(EVENTS_KEY, events);
        return { events: events.length };
      }),
      events: shared(async (ctx: ObjectSharedContext) => (await ctx.get<ThreadEvent[]>(EVENTS_KEY)) ?? null),
    },
  });
}

type ArchiveClient = {
  put(history: Message[]): Promise<unknown>;
  get(): Promise<Message[] | null>;
  putEvents(events: ThreadEvent[]): Promise<unknown>;
  events(): Promise<ThreadEvent[] | null>;
};

const client = (ctx: ObjectSharedContext, name: string, boundary: string) =>
  ctx.objectClient<ArchiveClient>({ name: archiveName(name) }, archiveKey(ctx.key, boundary));

/** Writes the histories of new boundaries, one recorded call each, and waits until they are kept. */
export async function archiveHistories(
  ctx: ObjectContext,
  name: string,
  histories: Record<string, Message[]>,
): Promise<void> {
  for (const [boundary, history] of Object.entries(histories)) await client(ctx, name, boundary).put(history);
}

/**
 * The history before `boundary`, or null when there is none: from the archive, else from the
 * session's own state where sessions written before the archive kept it.
 */
export async function archivedHistory(
  ctx: ObjectSharedContext,
  name: string,
  boundary: string,
): Promise<Message[] | null> {
  return (await client(ctx, name, boundary).get()) ?? (await ctx.get<Message[]>(legacyArtifactKey(boundary)));
}

/** Keeps a chunk of older events (a recorded call, written once per chunk). */
export async function archiveEvents(
  ctx: ObjectContext,
  name: string,
  start: number,
  events: ThreadEvent[],
): Promise<void> {
  await ctx
    .objectClient<ArchiveClient>({ name: archiveName(name) }, chunkKey(ctx.key, start))
    .putEvents(events);
}

/** The chunk of older events starting at event `start`, or null when there is none. */
export async function archivedEvents(
  ctx: ObjectSharedContext,
  name: string,
  start: number,
): Promise<ThreadEvent[] | null> {
  return ctx.objectClient<ArchiveClient>({ name: archiveName(name) }, chunkKey(ctx.key, start)).events();
}
