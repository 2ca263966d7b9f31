import type { MemoryRecords, ThreadEvent, BoundaryInfo } from '../store/index.js';
import {
  SummaryCacheReportSchema,
  type SummaryCacheReport,
} from '../runtime/local-summary/summary-prefix.js';
import type { TurnCarry } from '../session/session-runner.js';
import type { ObjectContext, ObjectSharedContext } from './sdk.js';
import { archivedEvents, archiveEvents } from './session-archive.js';

/**
 * What the session object keeps in its own state: only the events from the last compaction
 * boundary on (the boundary holds the live history it left, so they are all a turn needs),
 * the snapshots, and a small note of what went before. Restate hands an object its whole state
 * with every call, and over HTTP/1.1 with every recorded step, so this stays the size of one
 * round of the conversation however long the session has run. The older events go, once, to
 * numbered chunks in the archive object (`<session>/events-000001` …), read only to list
 * every boundary.
 *
 * Sessions written before kept every event here; they load as they are (no `offset`), and
 * their first write moves the older events to a chunk.
 */

/** Object state key of the working records. */
export const RECORDS_KEY = 'records';

/** What went to the archive: counts and names, so nothing needs to read it back. */
export interface ArchivedNote {
  /** `message.appended` events in the chunks. */
  messages: number;
  /** Boundary ids in the chunks, in order. */
  boundaries: string[];
  /** First event of each chunk (1, 2, 3 …), in order. */
  chunks: number[];
}

/** What the records keep beside the events: the last summary request's cache report and what the last turn handed on. */
export interface RecordsNotes {
  /** How the last summary request was built and the share of it the provider's cache served. */
  summaryCache?: SummaryCacheReport;
  /** What the last turn hands the next one (read back with `keptCarry`). */
  carry?: TurnCarry;
}

/** The records as kept in the object (no histories: those live in the archive), and their notes. */
export type StoredRecords = Omit<MemoryRecords, 'artifacts'> & RecordsNotes & { archived?: ArchivedNote };

const NOTHING_ARCHIVED: ArchivedNote = { messages: 0, boundaries: [], chunks: [] };

/** The working records (empty for a new session). */
export async function loadRecords(ctx: ObjectSharedContext): Promise<StoredRecords> {
  return (await ctx.get<StoredRecords>(RECORDS_KEY)) ?? { events: [], snapshots: {} };
}

/** The records as a memory store opens them (without the archive note). */
export function storeRecords({ events, snapshots, offset }: StoredRecords): Omit<MemoryRecords, 'artifacts'> {
  return { events, snapshots, ...(offset ? { offset } : {}) };
}

/** Events ever recorded: the archived ones and the working ones. */
export const eventCount = (records: StoredRecords) => (records.offset ?? 0) + records.events.length;

/**
 * Keeps `next` (what a store committed, starting at the same offset as what was loaded): the
 * events before its last boundary go to a new chunk first (a recorded call), then the rest is
 * the object's state.
 */
export async function keepRecords(
  ctx: ObjectContext,
  name: string,
  previous: StoredRecords,
  next: Omit<MemoryRecords, 'artifacts'>,
  notes: RecordsNotes = {},
): Promise<void> {
  const offset = next.offset ?? 0;
  const summaryCache = notes.summaryCache ?? previous.summaryCache;
  const carry = notes.carry ?? previous.carry;
  const cache = { ...(summaryCache ? { summaryCache } : {}), ...(carry ? { carry } : {}) };
  const last = lastBoundary(next.events);
  const archived = previous.archived ?? NOTHING_ARCHIVED;
  if (!movesToArchive(next.events)) {
    ctx.set(RECORDS_KEY, { ...storeRecords(next), ...(previous.archived ? { archived } : {}), ...cache });
    return;
  }
  // Messages a turn appended are stamped with the time of the run that appended them, so a
  // replayed run would send other bytes than the recorded call: the chunk is recorded first.
  const older = await ctx.run('events to archive', async () => next.events.slice(0, last));
  await archiveEvents(ctx, name, offset + 1, older);
  const records: StoredRecords = {
    events: next.events.slice(last),
    snapshots: next.snapshots,
    offset: offset + last,
    archived: {
      messages: archived.messages + older.filter((e) => e.type === 'message.appended').length,
      boundaries: [...archived.boundaries, ...boundaryIds(older)],
      chunks: [...archived.chunks, offset + 1],
    },
    ...cache,
  };
  ctx.set(RECORDS_KEY, records);
}

/** Index of the last boundary in `events` (-1: none). */
function lastBoundary(events: readonly ThreadEvent[]): number {
  let last = -1;
  events.forEach((e, i) => {
    if (e.type === 'thread.compact_boundary') last = i;
  });
  return last;
}

/** Whether keeping `events` moves the ones before their last boundary to a chunk of the archive. */
export const movesToArchive = (events: readonly ThreadEvent[]) => lastBoundary(events) > 0;

const boundaryIds = (events: readonly ThreadEvent[]) =>
  events.flatMap((e) => (e.type === 'thread.compact_boundary' ? [e.id] : []));

/** Whether `boundary` was recorded, in the chunks or in the working events. */
export function knownBoundary(records: StoredRecords, boundary: string): boolean {
  return (
    (records.archived?.boundaries.includes(boundary) ?? false) ||
    boundaryIds(records.events).includes(boundary)
  );
}

/** Messages ever appended (compactions do not lower it). */
export function messagesRecorded(records: StoredRecords): number {
  const working = records.events.filter((e) => e.type === 'message.appended').length;
  return (records.archived?.messages ?? 0) + working;
}

/** Every boundary in order: those of the chunks (read from the archive), then the working ones. */
export async function allBoundaries(
  ctx: ObjectSharedContext,
  name: string,
  records: StoredRecords,
  working: BoundaryInfo[],
): Promise<BoundaryInfo[]> {
  const older: BoundaryInfo[] = [];
  for (const start of records.archived?.chunks ?? []) {
    const events = (await archivedEvents(ctx, name, start)) ?? [];
    for (const e of events)
      if (e.type === 'thread.compact_boundary') {
        const { history: _history, type: _type, ...info } = e;
        older.push(info);
      }
  }
  return [...older, ...working];
}

/** The last summary request's cache report the records keep, or null (none yet, or one this version cannot read). */
export function keptSummaryCache(records: StoredRecords): SummaryCacheReport | null {
  const parsed = SummaryCacheReportSchema.safeParse(records.summaryCache);
  return parsed.success ? parsed.data : null;
}
