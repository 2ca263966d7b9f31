import { readdirSync } from 'node:fs';
import type { CompactionMode } from '../../machines/index.js';
import { CompactorOptionsError, StoredSessionConflictError } from '../core/errors.js';
import type { CompactorSessionOptions } from './options.js';
import { jsonEqual } from '../formats/residual.js';
import type { Json, Message } from '../messages/message.js';
import type { Receipt } from '../summary/receipt.js';
import {
  ARTIFACTS_DIR,
  CORRUPT_SUFFIX,
  EVENTS_FILE,
  isLockFile,
  fileStore,
  openSessionStore,
  PREVIOUS_DIR,
  SNAPSHOTS_DIR,
  type BoundaryInfo,
  type SessionStore,
  type SessionStoreSource,
} from '../store/index.js';

/**
 * A session directory as a session uses it: opened under its writer lock, an
 * earlier session continued (or moved aside), and the messages a session adds written at
 * once or held back until a run succeeds.
 */

/** Where the session keeps its records: the given store, a session directory, or nowhere. */
export function storeSource(options: CompactorSessionOptions): SessionStoreSource | undefined {
  if (options.store && options.sessionDir !== undefined)
    throw new CompactorOptionsError(
      'createCompactorSession: options.store',
      'give a store or a sessionDir, not both',
    );
  if (options.store) return options.store;
  return options.sessionDir === undefined
    ? undefined
    : fileStore(options.sessionDir, { lock: options.storeLock });
}

/** When messages added to a store are written (see `CompactorSessionOptions.storeWrites`). */
export type StoreWrites = 'immediate' | 'onSuccess';

/** Opens a session directory for reading only: no lock, nothing written (restore, stats). */
export function openSessionRecords(dir: string): SessionStore {
  return openSessionStore(dir, { create: false });
}

/** How to open the store. */
export interface StoredHistoryOptions {
  source: SessionStoreSource;
  /** Move a session already in `dir` to `previous/<time>/` and start anew. */
  startOver?: boolean;
  /** The caller's history: it must start with the messages the store recorded. */
  history?: readonly Message[];
  writes: StoreWrites;
}

/** An open store with the session's rules for adding, committing and dropping messages. */
export interface StoredHistory {
  store: SessionStore;
  /** The live history: the stored one plus the messages the caller's history added. */
  history: Message[];
  /** How many of the caller's messages the store already held. */
  resumedFrom: number;
  /** How many events the log held when it was opened (before the caller's new messages). */
  openedEvents: number;
  /** Adds messages (held back with `onSuccess` writes, else committed). */
  add(messages: readonly Message[]): void;
  /**
   * Adds messages like {@link StoredHistory.add}, but a file store committing at once returns
   * before their fsync: the promise resolves once they are durable (see
   * `SessionStore.appendMessagesSyncingLater`).
   */
  addSyncingLater(messages: readonly Message[], carry?: unknown): Promise<void>;
  /** Commits held messages, and a compaction's boundary when given; returns the boundary. `carry` is kept with that write. */
  commit(compaction?: CompactionToRecord, carry?: unknown): BoundaryInfo | null;
  /** Drops held messages; returns the history as stored. */
  rollback(): Message[];
}

/** A compaction to record with its boundary. */
export interface CompactionToRecord {
  before: readonly Message[];
  after: readonly Message[];
  mode: CompactionMode;
  strategy: string;
  /** The receipt of a Local pass, kept with the boundary. */
  receipt?: Receipt | null;
}

const STORE_REASON: Record<CompactionMode, string> = {
  manual: 'manual',
  automatic: 'automatic',
  recovery: 'recovery',
  targeted: 'targeted',
  modelSwitch: 'model-switch',
};

/** What a directory with no session may hold besides the store's own files. */
const OWN_FILES = [
  EVENTS_FILE,
  `${EVENTS_FILE}${CORRUPT_SUFFIX}`,
  ARTIFACTS_DIR,
  SNAPSHOTS_DIR,
  PREVIOUS_DIR,
  'inspect.jsonl',
];

/**
 * Opens the store for writing. A store that holds a session is continued when the caller's
 * history starts with every message it recorded (the same session, grown since): only the
 * new messages are added, and the live history is the stored one (after earlier
 * compactions) plus them. `startOver` moves the old records aside first.
 */
export function openStoredHistory(options: StoredHistoryOptions): StoredHistory {
  const store = options.source.open({ startOver: options.startOver });
  try {
    const given = options.history ?? [];
    const recorded = store.events().flatMap((e) => (e.type === 'message.appended' ? [e.message] : []));
    checkContinues(store, recorded, given);
    const stored = storedHistory(store, options.writes);
    stored.openedEvents = store.events().length;
    stored.add(given.slice(recorded.length));
    stored.history = store.loadHistory();
    stored.resumedFrom = recorded.length;
    return stored;
  } catch (e) {
    store.close();
    throw e;
  }
}

function checkContinues(store: SessionStore, recorded: readonly Message[], given: readonly Message[]): void {
  const dir = store.dir ?? 'the session store';
  const other =
    store.dir !== undefined && store.events().length === 0
      ? readdirSync(store.dir)
          .sort()
          .find((f) => !OWN_FILES.includes(f) && !isLockFile(f))
      : undefined;
  if (other !== undefined)
    throw new StoredSessionConflictError(
      dir,
      `holds other files (${other}) and no session`,
      'use a new or empty directory',
    );
  if (given.length === 0) return;
  const differs = recorded.findIndex((m, i) => i >= given.length || !sameMessage(m, given[i]!));
  if (differs >= 0)
    throw new StoredSessionConflictError(
      dir,
      `already holds a different session (recorded message ${differs + 1} of ${recorded.length} is not in the history at that place)`,
      'start over to replace it',
    );
}

// Stored messages went through JSON and the schema: compare them as JSON values (absent and
// undefined keys alike, key order ignored) without serializing every message on each open.
const sameMessage = (a: Message, b: Message): boolean => jsonEqual(a, b);

function storedHistory(store: SessionStore, writes: StoreWrites): StoredHistory {
  return {
    store,
    history: [],
    resumedFrom: 0,
    openedEvents: 0,
    add(messages) {
      if (messages.length > 0) store.appendMessages(messages, { commit: writes === 'immediate' });
    },
    addSyncingLater(messages, carry) {
      // The carry goes with messages written at once; held ones keep it with their commit.
      if (
        (messages.length > 0 || carry !== undefined) &&
        writes === 'immediate' &&
        store.appendMessagesSyncingLater
      )
        return store.appendMessagesSyncingLater(messages, carry);
      this.add(messages);
      return Promise.resolve();
    },
    commit(compaction, carry) {
      if (!compaction) {
        store.commit(carry);
        return null;
      }
      // The boundary event commits every message appended before it.
      return store.recordCompaction({
        before: compaction.before,
        after: compaction.after,
        mode: compaction.strategy === 'local' ? 'local' : 'provider',
        reason: STORE_REASON[compaction.mode],
        strategy:
          compaction.strategy === 'local'
            ? 'local'
            : compaction.strategy === 'nativeInline'
              ? 'nativeInline'
              : 'nativeStandalone',
        ...(compaction.receipt ? { receipt: compaction.receipt as unknown as Json } : {}),
        ...(carry === undefined ? {} : { carry }),
      });
    },
    rollback() {
      store.rollback();
      return store.loadHistory();
    },
  };
}
