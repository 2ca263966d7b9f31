/**
 * `context-compactor/ai-sdk`: Compactor for the Vercel AI SDK — a `wrapLanguageModel`
 * middleware that keeps every prompt inside the window, lossless ModelMessage converters, and a
 * summarizer over any AI SDK model. Needs the optional peer dependency `ai`.
 */
export {
  compactorMiddleware,
  type CompactorMiddleware,
  type CompactorMiddlewareOptions,
} from './middleware.js';
export { fromModelMessages, toModelMessages } from './convert.js';
export { aiSdkSummarizer } from './summarizer.js';
export * from '../shared/public.js';
