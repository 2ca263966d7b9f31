/**
 * The library API: a Compactor session embedded in an agent loop (projection, headless
 * turns, explicit compaction, durable records, cache health).
 */
export { createCompactorSession } from './session.js';
export type {
  CompactorSession,
  CompactOptions,
  CompactionToCommit,
  PrepareRequestOptions,
  PreparedRequest,
  SessionTurnOptions,
  SessionTurnResult,
} from './session-types.js';
export { openSessionRecords, type StoreWrites } from './stored-history.js';
export { claimDataDir, type ClaimedDataDir } from './data-dir.js';
export { StoredSessionConflictError } from '../core/errors.js';
export {
  SessionOptionsSchema,
  type CompactorSessionOptions,
  type SessionLimits,
  type CompactionSettings,
} from './options.js';
export {
  createCacheHealthMonitor,
  type CacheHealthMonitor,
  type CacheHealthOptions,
  type CacheHealthState,
  type CacheUsage,
  type CacheUsageVerdict,
  type CacheAlert,
  type CompactionOutcome,
} from './cache-health.js';
export {
  parentContextFor,
  requestFieldsFor,
  requestToolsFor,
  type RequestEnvelope,
  type RequestWire,
  type ParentContext,
} from './parent-context.js';
export {
  checkRouteProvider,
  resolveSessionRoute,
  OFFLINE_CONTEXT_WINDOW,
  type SessionRoute,
  type RouteOptions,
} from './route.js';
export { resolveConfig, envelopeTokens, type ResolvedSessionConfig, type SessionConfig } from './config.js';
export { ROUTE, ROUTE_SETTINGS } from '../providers/route-settings.js';
export {
  describeCompaction,
  rootCauseOf,
  CACHE_NOTE,
  nothingToCompactLine,
  type SessionCompactionReport,
  type DescribeContext,
  type SummaryPassSource,
} from './report.js';
// Observers a caller can hand to `inspect` (a JSONL log, the Stately inspector).
export { createJsonlInspector } from '../runtime/inspection.js';
export {
  SummaryCacheReportSchema,
  type SummaryCacheReport,
} from '../runtime/local-summary/summary-prefix.js';
export {
  createStatelyInspector,
  type StatelyInspector,
  type StatelyInspectorOptions,
} from '../runtime/stately-relay.js';
