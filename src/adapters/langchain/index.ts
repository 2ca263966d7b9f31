/**
 * `context-compactor/langchain`: Compactor for LangChain JS agents — a `createAgent`
 * middleware that keeps what the model sees inside the window, lossless `BaseMessage`
 * converters, and a summarizer over any chat model. Needs the optional peer dependencies
 * `langchain` and `@langchain/core`.
 */
export { compactorMiddleware, type CompactorMiddlewareOptions } from './middleware.js';
export { fromBaseMessages, toBaseMessages } from './convert.js';
export { langchainSummarizer } from './summarizer.js';
export * from '../shared/public.js';
