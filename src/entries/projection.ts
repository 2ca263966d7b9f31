/**
 * `context-compactor/projection`: the pure functions under a session that turn the durable
 * history into the next request (pairing repair, tool-result clearing, budgets), the token
 * estimator they count with, and the prompt-cache health monitor. No I/O, no machines.
 */
export {
  projectRequest,
  normalizeHistory,
  clearOldToolResults,
  clearOldToolResultsWithRecentBatches,
  resolveBudgets,
  resolveEvidenceBudget,
  effectiveLimits,
  resolveRoutePolicy,
  DEFAULT_CLEARING_POLICY,
  CLEARING_PRESET_NAMES,
  DEFAULT_EVIDENCE_WINDOW_RATIO,
  DEFAULT_ROUTE_POLICY,
  type Limits,
  type Budgets,
  type ClearingPolicy,
  type ClearingPresetName,
  type RoutePolicy,
  type RoutePolicyEntry,
  type ProjectedRequest,
  type ProjectRequestOptions,
  type ProjectionDiagnostics,
  type ClearToolResultsOptions,
  type ClearToolResultsResult,
  type ToolClearingStats,
  type Pairing,
  type ToolBatch,
  type InvalidReason,
  type CacheCycle,
} from '../projection/index.js';
export {
  createEstimator,
  freeEncoders,
  type Estimator,
  type EstimatorOptions,
  type EncodingName,
  type TokenCounter,
  type AnchoredPressure,
} from '../estimate/index.js';
export {
  createCacheHealthMonitor,
  type CacheHealthMonitor,
  type CacheHealthOptions,
  type CacheHealthState,
  type CacheUsage,
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
