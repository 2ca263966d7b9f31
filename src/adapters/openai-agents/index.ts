/**
 * `context-compactor/openai-agents`: Compactor for the OpenAI Agents SDK — a
 * `callModelInputFilter` for `run()` that keeps every model call's input inside the window,
 * lossless input-item converters, and a summarizer over any Agents SDK `Model`. Works with the
 * optional peer dependency `@openai/agents` (its types only; nothing is loaded from it).
 */
export {
  compactorInputFilter,
  type CompactorInputFilter,
  type CompactorInputFilterOptions,
} from './input-filter.js';
export { fromAgentInputItems, toAgentInputItems } from './convert.js';
export { agentsSummarizer } from './summarizer.js';
export * from '../shared/public.js';
