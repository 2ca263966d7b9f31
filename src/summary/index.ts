/**
 * Local compaction and its safeguards (summary validation, re-injection), as pure functions the machines and
 * CLI wire together: prepare a bounded fork → call a SummaryClient → validate → rebuild
 * history → re-inject durable context.
 */
export { pruneOversizedToolOutputs, TOOL_RESULT_PRUNE_TOKENS, type PruneOptions } from './prune.js';
export { boundHistoryForSummary, type BoundOptions, type BoundedFork, type BoundMode } from './bound.js';
export {
  prepareLocalSummary,
  toSummaryRequest,
  type PrepareOptions,
  type PreparedSummary,
  type SummaryRequestContext,
} from './prepare.js';
export {
  prepareHierarchicalBands,
  rebuildHierarchicalHistory,
  ABSTRACT_INSTRUCTIONS,
  ABSTRACT_MAX_OUTPUT_TOKENS,
  type BandOptions,
  type HierarchicalBands,
} from './hierarchical.js';
export {
  rebuildHistory,
  summaryMessage,
  isSummaryMessage,
  SUMMARY_PREFIX,
  type RebuildOptions,
  type RebuiltHistory,
} from './rebuild.js';
export { splitContinuityTail, type ContinuitySplit } from './continuity.js';
export { collectRetainedMessages, type RetentionOptions } from './retention.js';
export { boundCompactedHistory, compactedHistoryBudget, SUMMARY_CAP_TOKENS } from './output-bound.js';
export {
  summaryFailure,
  requireSummaryText,
  SUMMARY_FAILURE_LABEL,
  type SummaryAttempt,
} from './diagnostics.js';
export {
  validateSummary,
  type SummaryCheck,
  type SummaryValidation,
  type ValidateOptions,
} from './validate.js';
export { repairInstructions, summaryWarning, type SummaryWarning } from './repair.js';
export {
  loadSummaryPrompt,
  summarySections,
  DEFAULT_SUMMARY_PROMPT_VERSION,
  type SummaryPrompt,
} from './prompt.js';
export {
  createOfflineSummarizer,
  OFFLINE_PROVIDER,
  OFFLINE_MODEL,
  type OfflineSummarizerOptions,
} from './offline/offline-summarizer.js';
export {
  buildReinjection,
  applyReinjection,
  defaultReinjectBudget,
  REINJECT_BUDGET_MAX_TOKENS,
  REINJECT_BUDGET_WINDOW_RATIO,
  type Reinjection,
  type ReinjectionOptions,
} from './reinject.js';
export { isProtocolValid, protocolGroups, completeProtocolPrefix } from './protocol-groups.js';
