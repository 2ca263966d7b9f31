import type { ClearingPolicy } from '../../../src/projection/clearing-policy.js';
import type { RetentionPolicy } from '../types.js';
import { aiSdkPrunePolicy } from './ai-sdk-prune.js';
import { anthropicClearToolUsesPolicy } from './anthropic-clear-tool-uses.js';
import { compactorEvidencePolicy, compactorPolicy, compactorVariant, noClearingPolicy } from './compactor.js';
import { geminiMaskPolicy } from './gemini-mask.js';
import { keepLastMessagesPolicy } from './keep-last-messages.js';
import { langchainClearToolUsesPolicy, langchainTrimPolicy } from './langchain-policies.js';
import { opencodePrunePolicy } from './opencode-prune.js';
import { vtcodePerResultPolicy } from './vtcode-per-result.js';

export { aiSdkPrunePolicy, AI_SDK_PRUNE_OPTIONS } from './ai-sdk-prune.js';
export * from './anthropic-clear-tool-uses.js';
export { compactorEvidencePolicy, compactorPolicy, compactorVariant, noClearingPolicy } from './compactor.js';
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
    ...peerPolicies(),
    compactorPolicy(0),
    compactorPolicy(),
    compactorEvidencePolicy(0.75),
    compactorEvidencePolicy(0.9),
  ];
}

/** The baselines and the peers' policies, in report order. */
export function peerPolicies(): RetentionPolicy[] {
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
  ];
}

/** The Compactor settings the defaults are chosen from (issue 16): the seed's, wider evidence, batching, waiting. */
export function compactorCandidates(): RetentionPolicy[] {
  const batch = (n: number) =>
    `clear in steps of at least ${n.toLocaleString('en-US')} tokens (clearAtLeast)`;
  const wait = 'compaction waits for a cache break';
  const variant = (name: string, policy: Partial<ClearingPolicy>, what: string[]) =>
    compactorVariant(name, policy, `Compactor, ${what.join(', ')}.`);
  return [
    compactorPolicy(),
    variant('compactor-batch-2k', { clearAtLeast: 2_000 }, [batch(2_000)]),
    variant('compactor-batch-5k', { clearAtLeast: 5_000 }, [batch(5_000)]),
    variant('compactor-batch-5k-wait', { clearAtLeast: 5_000, compactionWaitsForCacheBreak: true }, [
      batch(5_000),
      wait,
    ]),
    variant(
      'compactor-evidence-0.9-batch-5k-wait',
      { evidenceWindowRatio: 0.9, clearAtLeast: 5_000, compactionWaitsForCacheBreak: true },
      ['evidence 0.9', batch(5_000), wait],
    ),
  ];
}
