/** The durable session store. */
export {
  openSessionStore,
  fileStore,
  EVENTS_FILE,
  ARTIFACTS_DIR,
  SNAPSHOTS_DIR,
  PREVIOUS_DIR,
  type SessionStore,
  type FileSessionStore,
  type SessionStoreSource,
  type CompactionRecord,
  type BoundaryInfo,
  type OpenOptions,
} from './session-store.js';
export { memoryStore, type MemoryStore, type MemoryRecords } from './memory-store.js';
export { CORRUPT_SUFFIX } from './events-log.js';
export { settleFinishedFsyncs } from './fsync-thread.js';
export { loadEventLog, type KeptCarry, type LogWarning, type LoadedLog } from './load-event-log.js';
export { replayEvents } from './open-store.js';
export {
  acquireSessionLock,
  isLockFile,
  LOCK_FILE,
  type LockOptions,
  type SessionLock,
} from './session-lock.js';
export {
  ThreadEventSchema,
  CompactBoundarySchema,
  MessageAppendedSchema,
  ArtifactSchema,
  type ThreadEvent,
  type CompactBoundary,
  type CompactionOrigin,
} from './events.js';
