/**
 * `context-compactor/store`: the durable session directory a session with `sessionDir`
 * writes (an append-only event log, one full-history artifact per compaction) and reads back.
 */
export {
  openSessionStore,
  fileStore,
  memoryStore,
  loadEventLog,
  ThreadEventSchema,
  CompactBoundarySchema,
  type SessionStore,
  type FileSessionStore,
  type SessionStoreSource,
  type MemoryStore,
  type MemoryRecords,
  type CompactionRecord,
  type BoundaryInfo,
  type ThreadEvent,
  type CompactBoundary,
  type OpenOptions,
  type LockOptions,
  type LoadedLog,
  type LogWarning,
  type CompactionOrigin,
} from '../store/index.js';
