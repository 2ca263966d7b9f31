/** Public surface of the provider layer (S1, O1–O3, A1–A5, L5/L6 error facts). */
export * from './types.js';
export * from './errors.js';
export { PROVIDER_KINDS, PROVIDER_PRESETS, BUNDLED_MODELS, XAI_COMPACT_MODELS } from './catalog-data.js';
export type { ProviderKind, ProviderPreset, ModelEntry, WireApi } from './catalog-data.js';
export { resolveRoute, lookupModel, loadCatalogFile, isLocalUrl, CatalogFileSchema } from './catalog.js';
export type { ResolvedRoute, RouteOptions, CatalogFile } from './catalog.js';
export { selectStrategy, isAnthropicInlineModel, isXaiCompactModel } from './strategy.js';
export type { StrategyChoice } from './strategy.js';
export { createProviderClients } from './factory.js';
export type { ProviderClients } from './factory.js';
export { createSummaryClient } from './summary-clients.js';
export { createStandaloneClient, compactPayload } from './standalone-client.js';
export { createInlineClient, inlineEdits, inlinePayload, isRejectedEdit } from './inline-client.js';
export type { InlineRequestExtras } from './inline-client.js';
export { betasForPayload, aggregateAnthropicUsage } from './anthropic-headers.js';
export { toAnthropicConversation } from './anthropic-convert.js';
export { toResponsesInput, fromResponsesOutput } from './responses-convert.js';
export { toChatMessages } from './chat-convert.js';
export { isContextCapacity, inputTokensFromMessage, errorFactsFromBody } from './classify-error.js';
export type { HttpOptions } from './http.js';
export { redact } from './redact.js';
export { forwardedFields, type RequestFields, type FieldEndpoint } from './request-fields.js';
export {
  HTTP_DEFAULTS,
  HTTP_LIMITS_SHAPE,
  HttpOptionsSchema,
  httpLimits,
  spokenDuration,
} from './http-limits.js';
export type { HttpLimits, WaitingInfo } from './http-limits.js';
