/**
 * Compactor's package entry (`import … from 'context-compactor'`): the session API for embedding
 * Compactor in an agent loop, and the building blocks under it — the canonical message
 * model, token estimation, request projection, session formats, the machine runner, the
 * summarizers, provider clients and the durable store.
 */

// Library API (sessions).
export * from './session/index.js';

// Canonical message model (D1).
export {
  MessageSchema,
  HistorySchema,
  RoleSchema,
  ContentPartSchema,
  ToolCallSchema,
  ContentSchema,
  msg,
  textOf,
  hasToolCalls,
  type Message,
  type History,
  type ToolCall,
  type Content,
  type ContentPart,
  type Role,
  type Json,
} from './messages/message.js';

// Token estimation (T1–T3).
export {
  createEstimator,
  freeEncoders,
  type Estimator,
  type EstimatorOptions,
  type EncodingName,
  type TokenCounter,
  type AnchoredPressure,
} from './estimate/index.js';

// Request projection (N, B, C, P).
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
  type ProjectedRequest,
  type ProjectRequestOptions,
  type ProjectionDiagnostics,
  type ClearToolResultsOptions,
  type ClearToolResultsResult,
  type RoutePolicyEntry,
  type ToolClearingStats,
  type Pairing,
  type ToolBatch,
  type InvalidReason,
  type CacheCycle,
} from './projection/index.js';

// Session formats (D2, D3).
export {
  readSessionFile,
  parseSession,
  exportSession,
  detectFormat,
  selectSession,
  type FormatName,
  type ExportFormat,
  type ImportedSession,
  type ImportResult,
  type ExportOptions,
} from './formats/index.js';

// Machines interpreted with real actors (H, S, L).
export {
  createTurnRunner,
  createLocalSummarizer,
  DEFAULT_REINJECT_BUDGET_TOKENS,
  type TurnRunner,
  type TurnRunnerDeps,
  type TurnRequest,
  type TurnResult,
  type CompactionReport,
  type CompactionRequest,
  type RunOptions,
  type LocalSummarizer,
  type LocalSummarizerOptions,
  type LocalFork,
  type PreparedFork,
  type Clock,
  type InspectOption,
  type TurnActorDeps,
  type CompactionDeps,
  type ProjectionFunctions,
  type LocalSummarizerWithWarnings,
} from './runtime/index.js';
export type {
  CompactionMode,
  CompactionStrategy,
  Failure,
  FailureReason,
  LoopGuardState,
  LoopGuardPolicy,
  TurnDecision,
} from '../machines/index.js';

// Summaries (L, §14).
export {
  createOfflineSummarizer,
  OFFLINE_PROVIDER,
  OFFLINE_MODEL,
  validateSummary,
  loadSummaryPrompt,
  type OfflineSummarizerOptions,
  type PreparedSummary,
  type ValidateOptions,
  type SummaryValidation,
  type SummaryPrompt,
  type SummaryCheck,
  type BoundMode,
  type SummaryWarning,
} from './summary/index.js';

// Providers (S1, O, A).
export {
  resolveRoute,
  selectStrategy,
  createProviderClients,
  createSummaryClient,
  createStandaloneClient,
  createInlineClient,
  loadCatalogFile,
  type ResolvedRoute,
  type RouteSpec,
  type ProviderClients,
  type StrategyChoice,
  type StrategyKind,
  type SummaryClient,
  type SummaryRequest,
  type SummaryResponse,
  type NativeStandaloneClient,
  type NativeInlineClient,
  type ToolSchema,
  type Usage,
  type HttpOptions,
  type HttpLimits,
  type WaitingInfo,
  HTTP_DEFAULTS,
  httpLimits,
  type StrategyRoute,
  type Route,
  type ProviderKind,
  type WireApi,
  type CatalogFile,
  type StandaloneCompactRequest,
  type StandaloneCompactResult,
  type InlineCompactRequest,
  type InlineCompactResult,
  type InlineRequestExtras,
  PROVIDER_KINDS,
  CatalogFileSchema,
  type RequestFields,
} from './providers/index.js';

// Durable store (R1, R2).
export {
  openSessionStore,
  fileStore,
  memoryStore,
  loadEventLog,
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
  ThreadEventSchema,
  CompactBoundarySchema,
  // The store's own names would clash with the machines' CompactionMode (why compaction ran).
  type CompactionMode as RecordedCompactionMode,
  type Strategy as RecordedStrategy,
} from './store/index.js';
export { CompactionModeSchema, StrategySchema } from './store/events.js';

// Errors.
export {
  ProviderError,
  ContextCapacityError,
  EmptySummaryError,
  BudgetError,
  RouteError,
  type ProviderErrorInfo,
} from './providers/errors.js';
export { UserError, CompactorOptionsError } from './core/errors.js';
