/**
 * `context-compactor/unstable/projection` (may change in any release): the pure functions under a session that turn the durable
 * history into the next request (pairing repair, tool-result clearing, budgets), the token
 * estimator they count with, and the prompt-cache health monitor. No I/O, no machines.
 */
export {
  projectRequest,
  normalizeHistory,
  clearOldToolResults,
  resolveBudgets,
  DEFAULT_CLEARING_POLICY,
  CLEARING_PRESET_NAMES,
  DEFAULT_EVIDENCE_WINDOW_RATIO,
  type Limits,
  type Budgets,
  type ClearingPolicy,
  type ClearingPresetName,
  type RoutePolicy,
  type ProjectedRequest,
  type ProjectRequestOptions,
  type CacheCycle,
  type Pairing,
  type InvalidReason,
  type ToolBatch,
  type ProjectionDiagnostics,
  type ClearToolResultsOptions,
  type ClearToolResultsResult,
  type ToolClearingStats,
} from '../projection/index.js';
export {
  createCacheHealthMonitor,
  type CacheHealthMonitor,
  type CacheHealthOptions,
  type CacheUsageVerdict,
  type CacheAlert,
  type CompactionOutcome,
} from '../session/cache-health.js';

// The settings tables every option type is read from (one row per setting: type, default, flag, help).
export {
  LIMIT_SETTINGS,
  CLEARING_SETTINGS,
  COMPACTION_SETTINGS,
  type CompactionWaitSettings,
  type SessionConfig,
} from '../projection/index.js';
export type { SettingsOf } from '../core/settings.js';
