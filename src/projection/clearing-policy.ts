/**
 * The `toolResultClearing` policy: local, request-only clearing of old tool
 * results. Two named presets: `compactor` (the defaults, chosen on the retention pilot's
 * tuning half) and `vtcode` (VT Code's own defaults).
 */

import { DEFAULT_COMPACTION_WAIT } from './cache-aware.js';

/** Names of the clearing presets. */
export const CLEARING_PRESET_NAMES = ['compactor', 'vtcode'] as const;
/** A clearing preset: `compactor` (the defaults) or `vtcode` (VT Code's own defaults). */
export type ClearingPresetName = (typeof CLEARING_PRESET_NAMES)[number];

/** Local tool-result clearing settings. */
export interface ClearingPolicy {
  /** The preset the other fields start from (default `compactor`). */
  preset: ClearingPresetName;
  /** `false` turns local clearing off entirely. */
  enabled: boolean;
  /** Configured trigger; the effective one is capped by the history budget. */
  triggerTokens: number;
  /** Newest results kept, each expanded to its whole batch. */
  keepToolUses: number;
  /** Newest assistant tool-call messages kept with their batches; 0 disables (evidence window stays). */
  keepRecentToolBatches: number;
  /** Replace large inputs of cleared calls with a JSON placeholder. */
  clearToolInputs: boolean;
  /**
   * Opt-in: evidence budget = floor(local trigger × ratio), a number in (0, 1]. The default
   * 0.5 is VT Code's rule (floor(local trigger / 2)); other values are an experiment measured by
   * the retention pilot (`compactor-evidence-*` policies).
   */
  evidenceWindowRatio: number;
  /**
   * Cache-aware batching: clearing moves only in steps that free at least this many tokens
   * (like Anthropic's `clear_at_least`), so the request prefix stays byte-identical, and
   * cached, between steps. 0 (the default) clears every eligible result at once.
   */
  clearAtLeast: number;
  /**
   * Cache-aware compaction: while a request extends the previous one unchanged, compaction
   * waits (see `compactionWaitRatio`); it runs at the threshold on a turn whose prefix
   * changes anyway. On in preset `compactor`, off in `vtcode`.
   */
  compactionWaitsForCacheBreak: boolean;
  /**
   * How far compaction waits while the cache is intact: this share of the way from the
   * threshold to the prompt budget, a number in (0, 1) (default 0.85) …
   */
  compactionWaitRatio: number;
  /**
   * … but at most this many tokens past the threshold (default 7,000), in a prompt budget up to
   * 24,000 tokens (a 32k window); in a larger budget proportionally fewer (3,000 at 64k).
   */
  compactionWaitMaxTokens: number;
  /**
   * No wait where the expected cost says it cannot pay: past the threshold, compaction waits
   * only while the history has grown less since the last pass than the growth that costs least
   * per request (cache reads against the cost of a pass, at the fastest growth of one request
   * seen since). In large windows the threshold lies beyond it and compaction runs at the
   * threshold. Off in both presets: on the retention pilot's tuning half the plain scaled cap
   * kept the same recall for less.
   */
  compactionWaitByCost: boolean;
  /**
   * Clear old tool results instead of compacting when a summary pass would buy fewer turns than
   * this: where a few tool results fill the window, a pass every other step costs a slow, lossy
   * provider call each time, while clearing the oldest results costs none. Large windows (where a
   * pass buys many turns) keep compacting as before. 0 never clears first. 10 in preset
   * `compactor`, 0 in `vtcode` (which clears at its trigger anyway).
   */
  clearWhenPassBuysFewerTurns: number;
}

/** The evidence window is half the local trigger. */
export const DEFAULT_EVIDENCE_WINDOW_RATIO = 0.5;

/**
 * VT Code's own defaults (preset `vtcode`): enabled, trigger 40,000, keep 2 tool uses and
 * 2 recent batches, clear inputs, clear everything eligible at once, compact at the threshold.
 */
export const VTCODE_CLEARING_POLICY: Readonly<ClearingPolicy> = Object.freeze({
  preset: 'vtcode',
  enabled: true,
  triggerTokens: 40_000,
  keepToolUses: 2,
  keepRecentToolBatches: 2,
  clearToolInputs: true,
  evidenceWindowRatio: DEFAULT_EVIDENCE_WINDOW_RATIO,
  clearAtLeast: 0,
  compactionWaitsForCacheBreak: false,
  compactionWaitRatio: DEFAULT_COMPACTION_WAIT.ratio,
  compactionWaitMaxTokens: DEFAULT_COMPACTION_WAIT.maxTokens,
  compactionWaitByCost: false,
  clearWhenPassBuysFewerTurns: 0,
});

/**
 * The defaults (preset `compactor`): with a prompt cache, every clearing step rewrites the
 * cached prefix, and on the retention pilot's tuning half no clearing setting paid for that
 * rewrite; keeping results until compaction and letting compaction wait while the cache is
 * intact kept more evidence for fewer dollars. Clearing stays one option away
 * (`enabled: true` keeps VT Code's rules, or preset `vtcode`).
 */
export const DEFAULT_CLEARING_POLICY: Readonly<ClearingPolicy> = Object.freeze({
  ...VTCODE_CLEARING_POLICY,
  preset: 'compactor',
  enabled: false,
  compactionWaitsForCacheBreak: true,
  // The tuning half picked the scaled cap alone over the wait by expected cost.
  compactionWaitByCost: false,
  clearWhenPassBuysFewerTurns: 10,
});

/** Every preset by name. */
export const CLEARING_PRESETS: Readonly<Record<ClearingPresetName, Readonly<ClearingPolicy>>> = Object.freeze(
  {
    compactor: DEFAULT_CLEARING_POLICY,
    vtcode: VTCODE_CLEARING_POLICY,
  },
);

/** True for the name of a clearing preset. */
export function isClearingPreset(value: unknown): value is ClearingPresetName {
  return typeof value === 'string' && Object.hasOwn(CLEARING_PRESETS, value);
}

/** True for a usable compaction wait ratio: a number in (0, 1). */
export function isCompactionWaitRatio(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && value < 1;
}

/** True for a usable evidence window ratio: a finite number in (0, 1]. */
export function isEvidenceWindowRatio(value: unknown): value is number {
  return typeof value === 'number' && value > 0 && value <= 1;
}

/**
 * Fills a partial policy from its preset (default `compactor`); counts are coerced to non-negative integers and an
 * evidence window ratio outside (0, 1] (or NaN) falls back to the default 0.5.
 */
export function completeClearingPolicy(partial: Partial<ClearingPolicy> = {}): ClearingPolicy {
  const count = (v: number | undefined, d: number): number =>
    v === undefined || Number.isNaN(v) ? d : Math.max(0, Math.floor(Math.min(v, Number.MAX_SAFE_INTEGER)));
  // An unknown name (only possible past the zod schemas) falls back like the other fields.
  const preset = isClearingPreset(partial.preset) ? partial.preset : DEFAULT_CLEARING_POLICY.preset;
  const base = CLEARING_PRESETS[preset];
  return {
    preset,
    enabled: partial.enabled ?? base.enabled,
    triggerTokens: count(partial.triggerTokens, base.triggerTokens),
    keepToolUses: count(partial.keepToolUses, base.keepToolUses),
    keepRecentToolBatches: count(partial.keepRecentToolBatches, base.keepRecentToolBatches),
    clearToolInputs: partial.clearToolInputs ?? base.clearToolInputs,
    evidenceWindowRatio: isEvidenceWindowRatio(partial.evidenceWindowRatio)
      ? partial.evidenceWindowRatio
      : DEFAULT_EVIDENCE_WINDOW_RATIO,
    clearAtLeast: count(partial.clearAtLeast, base.clearAtLeast),
    compactionWaitsForCacheBreak: partial.compactionWaitsForCacheBreak ?? base.compactionWaitsForCacheBreak,
    compactionWaitRatio: isCompactionWaitRatio(partial.compactionWaitRatio)
      ? partial.compactionWaitRatio
      : base.compactionWaitRatio,
    compactionWaitMaxTokens: count(partial.compactionWaitMaxTokens, base.compactionWaitMaxTokens),
    compactionWaitByCost: partial.compactionWaitByCost ?? base.compactionWaitByCost,
    clearWhenPassBuysFewerTurns: count(partial.clearWhenPassBuysFewerTurns, base.clearWhenPassBuysFewerTurns),
  };
}
