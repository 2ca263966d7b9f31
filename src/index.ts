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
  DEFAULT_EVIDENCE_WINDOW_RATIO,
  DEFAULT_ROUTE_POLICY,
  type Limits,
  type Budgets,
  type ClearingPolicy,
  type RoutePolicy,
  type ProjectedRequest,
  type ProjectRequestOptions,
  type ProjectionDiagnostics,
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
} from './providers/index.js';

// Durable store (R1, R2).
export {
  openSessionStore,
  loadEventLog,
  type SessionStore,
  type CompactionRecord,
  type BoundaryInfo,
  type ThreadEvent,
  type CompactBoundary,
} from './store/index.js';

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
