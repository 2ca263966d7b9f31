import type { CompactorSetting, RetentionPolicy } from '../types.js';
import { aiSdkPrunePolicy } from './ai-sdk-prune.js';
import { anthropicClearToolUsesPolicy } from './anthropic-clear-tool-uses.js';
import {
  compactorEvidencePolicy,
  compactorPolicy,
  compactorVariant,
  compactorVtcodePolicy,
  noClearingPolicy,
} from './compactor.js';
import { geminiMaskPolicy } from './gemini-mask.js';
import { keepLastMessagesPolicy } from './keep-last-messages.js';
import { langchainClearToolUsesPolicy, langchainTrimPolicy } from './langchain-policies.js';
import { opencodePrunePolicy } from './opencode-prune.js';
import { vtcodePerResultPolicy } from './vtcode-per-result.js';

export { aiSdkPrunePolicy } from './ai-sdk-prune.js';
export * from './anthropic-clear-tool-uses.js';
export * from './compactor.js';
export * from './gemini-mask.js';
export * from './keep-last-messages.js';
export { langchainClearToolUsesPolicy, langchainTrimPolicy } from './langchain-policies.js';
export * from './opencode-prune.js';
export * from './vtcode-per-result.js';

/**
 * Every policy the bounded pilot compares, in report order (baselines first, then Compactor's
 * vtcode preset with 0 and 2 recent batches, its opt-in evidence ratios 0.75 and 0.9, and the defaults).
 */
export function allPolicies(): RetentionPolicy[] {
  return [
    ...peerPolicies(),
    compactorVtcodePolicy(0),
    compactorVtcodePolicy(),
    compactorEvidencePolicy(0.75),
    compactorEvidencePolicy(0.9),
    compactorPolicy(),
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

/**
 * The Compactor settings the defaults are chosen from, VT Code's first (ties go to
 * it): the vtcode preset plain and with last round's best cache-aware options, the defaults
 * (compaction waits 85 % of the way to the prompt budget, at most 7,000 tokens, fewer in windows
 * over 32k), earlier defaults (last session's: the same wait dropped where the expected cost says
 * it cannot pay; waiting halfway, uncapped) and the defaults with clearing on in large steps.
 * Each runs through the session API, so only settings a session can take are candidates.
 */
export function compactorCandidates(): RetentionPolicy[] {
  const batch = (n: number) =>
    `clear in steps of at least ${n.toLocaleString('en-US')} tokens (clearAtLeast)`;
  const wait = 'compaction waits for a cache break';
  const variant = (name: string, policy: CompactorSetting, what: string[]) =>
    compactorVariant(name, policy, `Compactor, ${what.join(', ')}.`);
  return [
    compactorVtcodePolicy(),
    variant(
      'vtcode-evidence-0.9-batch-5k-wait',
      { preset: 'vtcode', evidenceWindowRatio: 0.9, clearAtLeast: 5_000, waitsForCacheBreak: true },
      ['preset vtcode', 'evidence 0.9', batch(5_000), wait],
    ),
    compactorPolicy(),
    variant('compactor-wait-by-cost', { waitByCost: true }, [
      'defaults',
      'but no wait where the expected cost says it cannot pay (the defaults last session)',
    ]),
    variant(
      'compactor-wait-half',
      {
        waitRatio: 0.5,
        waitMaxTokens: Number.MAX_SAFE_INTEGER,
        waitByCost: false,
      },
      [
        'defaults',
        'but compaction waits only halfway to the prompt budget, uncapped, whatever the expected cost (the earliest default)',
      ],
    ),
    variant(
      'compactor-clearing-evidence-0.9-batch-20k',
      { enabled: true, evidenceWindowRatio: 0.9, clearAtLeast: 20_000, waitByCost: false },
      ['defaults with clearing on', 'evidence 0.9', batch(20_000), wait],
    ),
  ];
}
