/**
 * `context-compactor/unstable/store` (may change in any release): the durable session directory a session with `sessionDir`
 * writes (an append-only event log, one full-history artifact per compaction) and reads back.
 */
export {
  openSessionStore,
  memoryStore,
  loadEventLog,
  ThreadEventSchema,
  CompactBoundarySchema,
  type FileSessionStore,
  type LoadedLog,
  type MemoryRecords,
  type OpenOptions,
  type LockOptions,
  type SessionStore,
  type SessionStoreSource,
  type MemoryStore,
  type CompactionRecord,
  type BoundaryInfo,
  type ThreadEvent,
  type CompactBoundary,
  type LogWarning,
  type CompactionOrigin,
} from '../store/index.js';
