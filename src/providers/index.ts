/** Public surface of the provider layer: strategy choice, native and summary clients, their errors. */
export * from './types.js';
export {
  ProviderError,
  ContextCapacityError,
  EmptySummaryError,
  BudgetError,
  RouteError,
  type ProviderErrorInfo,
} from '../core/errors.js';
export { PROVIDER_KINDS, PROVIDER_PRESETS, BUNDLED_MODELS, XAI_COMPACT_MODELS } from './catalog-data.js';
export type { ProviderKind, ProviderPreset, ModelEntry, WireApi } from './catalog-data.js';
export { resolveRoute, lookupModel, loadCatalogFile, isLocalUrl, CatalogFileSchema } from './catalog.js';
export type { ResolvedRoute, RouteOptions, CatalogFile } from './catalog.js';
export { selectStrategy } from './strategy.js';
export { isAnthropicInlineModel, isXaiCompactModel } from './catalog-data.js';
export type { StrategyChoice } from './strategy.js';
export { createProviderClients, createSummaryClient, type ProviderClients } from './clients.js';
export { createStandaloneClient, compactPayload } from './openai-responses/compact-client.js';
export { createInlineClient, inlineEdits, inlinePayload, isRejectedEdit } from './anthropic/inline-client.js';
export type { InlineRequestExtras } from './anthropic/inline-client.js';
export { betasForPayload, aggregateAnthropicUsage } from './anthropic/headers.js';
export { toAnthropicConversation } from './anthropic/convert.js';
export { toResponsesInput, fromResponsesOutput } from './openai-responses/convert.js';
export { toChatMessages } from './chat/dialect.js';
export { isContextCapacity, inputTokensFromMessage, errorFactsFromBody } from './classify-error.js';
export type { HttpOptions } from './http.js';
export { redact } from './redact.js';
export { forwardedFields, type RequestFields, type FieldEndpoint } from './request-fields.js';
export {
  HTTP_DEFAULTS,
  HTTP,
  HTTP_SETTINGS,
  HttpOptionsSchema,
  httpLimits,
  spokenDuration,
} from './http-limits.js';
export type { HttpLimits, WaitingInfo } from './http-limits.js';
