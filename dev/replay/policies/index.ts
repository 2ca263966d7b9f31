import type { RetentionPolicy } from '../types.js';
import { aiSdkPrunePolicy } from './ai-sdk-prune.js';
import { anthropicClearToolUsesPolicy } from './anthropic-clear-tool-uses.js';
import { compactorEvidencePolicy, compactorPolicy, noClearingPolicy } from './compactor.js';
import { geminiMaskPolicy } from './gemini-mask.js';
import { keepLastMessagesPolicy } from './keep-last-messages.js';
import { langchainClearToolUsesPolicy, langchainTrimPolicy } from './langchain-policies.js';
import { opencodePrunePolicy } from './opencode-prune.js';
import { vtcodePerResultPolicy } from './vtcode-per-result.js';

export { aiSdkPrunePolicy, AI_SDK_PRUNE_OPTIONS } from './ai-sdk-prune.js';
export * from './anthropic-clear-tool-uses.js';
export { compactorEvidencePolicy, compactorPolicy, noClearingPolicy } from './compactor.js';
export * from './gemini-mask.js';
export * from './keep-last-messages.js';
export { langchainClearToolUsesPolicy, langchainTrimPolicy } from './langchain-policies.js';
export * from './opencode-prune.js';
export * from './vtcode-per-result.js';

/**
 * Every policy the retention pilot compares, in report order (baselines first, Compactor last,
 * then the opt-in evidence window ratios 0.75 and 0.9).
 */
export function allPolicies(): RetentionPolicy[] {
  return [
    noClearingPolicy,
    keepLastMessagesPolicy(),
    langchainTrimPolicy,
    aiSdkPrunePolicy,
    vtcodePerResultPolicy,
    opencodePrunePolicy,
    geminiMaskPolicy,
    anthropicClearToolUsesPolicy,
    langchainClearToolUsesPolicy,
    compactorPolicy(0),
    compactorPolicy(),
    compactorEvidencePolicy(0.75),
    compactorEvidencePolicy(0.9),
  ];
}
