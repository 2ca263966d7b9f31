import type { Message } from '../messages/message.js';
import { answerRecall, parseRecallArgs, type RecallAnswer } from '../projection/recall.js';
import type { ThreadEvent } from '../store/index.js';
import type { ObjectSharedContext } from './sdk.js';
import { archivedEvents } from './session-archive.js';
import { loadRecords } from './working-records.js';

/**
 * The session object's `recall`: answers a call of the recall tool (`{ id, range? }`) from
 * every message the session ever stored: the older events in the archive's chunks, then the
 * working ones. Results a summary replaced and the summaries' span indexes are all there, so
 * an id resolves whatever the caller still holds. It only reads, so it runs beside a turn.
 */

/** The messages of a session's stored events, oldest first (each compaction's new history too). */
async function storedMessages(ctx: ObjectSharedContext, name: string): Promise<Message[]> {
  const records = await loadRecords(ctx);
  const events: ThreadEvent[] = [];
  for (const start of records.archived?.chunks ?? [])
    events.push(...((await archivedEvents(ctx, name, start)) ?? []));
  events.push(...records.events);
  return events.flatMap((e) => (e.type === 'message.appended' ? [e.message] : e.history));
}

/** The answer to a recall call from the session's whole stored history. */
export async function recallFromStore(
  ctx: ObjectSharedContext,
  name: string,
  args: unknown,
): Promise<RecallAnswer> {
  // Arguments that are not a recall call get their one-line problem without reading anything.
  const parsed = parseRecallArgs(args);
  if (typeof parsed === 'string') return { text: parsed, found: false };
  return answerRecall(await storedMessages(ctx, name), parsed);
}
