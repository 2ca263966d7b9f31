/**
 * `context-compactor/unstable/providers` (may change in any release): where summaries and native compactions go — the provider
 * catalog and route resolution, the strategy each route gets, the provider clients, the
 * offline summarizer and summary checks, and the provider errors.
 */
export {
  resolveRoute,
  selectStrategy,
  createProviderClients,
  loadCatalogFile,
  CatalogFileSchema,
  PROVIDER_KINDS,
  BudgetError,
  EmptySummaryError,
  type ProviderErrorInfo,
  type ResolvedRoute,
  type ProviderClients,
  type StrategyChoice,
  type SummaryClient,
  type SummaryRequest,
  type SummaryResponse,
  type NativeStandaloneClient,
  type NativeInlineClient,
  type Usage,
  type HttpOptions,
  type HttpLimits,
  type WaitingInfo,
  type Route,
  type ProviderKind,
  type WireApi,
  type CatalogFile,
  type StandaloneCompactRequest,
  type StandaloneCompactResult,
  type InlineCompactRequest,
  type InlineCompactResult,
  type RequestFields,
} from '../providers/index.js';
export {
  createOfflineSummarizer,
  OFFLINE_PROVIDER,
  OFFLINE_MODEL,
  validateSummary,
  loadSummaryPrompt,
  type OfflineSummarizerOptions,
  type SummaryPrompt,
  type SummaryValidation,
  type ValidateOptions,
  type SummaryCheck,
  type PreparedSummary,
  type BoundMode,
  type SummaryWarning,
} from '../summary/index.js';
export { OFFLINE_CONTEXT_WINDOW } from '../session/route.js';
export type { RequestWire } from '../session/parent-context.js';

// The route and provider-time-limit tables.
export { HTTP_SETTINGS } from '../providers/index.js';
export { ROUTE_SETTINGS } from '../providers/route-settings.js';
export { DIALECTS } from '../providers/dialects.js';
export type { WireDialect, WireBody, NativeCompaction } from '../providers/dialect.js';
export type { SseEvent } from '../providers/sse.js';
export type { CallSite } from '../providers/classify-error.js';
