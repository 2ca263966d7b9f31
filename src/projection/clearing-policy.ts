/**
 * The `toolResultClearing` policy (SPEC §5): local, request-only clearing of old tool
 * results. Defaults are VT Code's current ones.
 */

/** Local tool-result clearing settings (SPEC §5). */
export interface ClearingPolicy {
  /** `false` turns local clearing off entirely. */
  enabled: boolean;
  /** Configured trigger; the effective one is capped by the history budget (B3). */
  triggerTokens: number;
  /** Newest results kept, each expanded to its whole batch (C3a). */
  keepToolUses: number;
  /** Newest assistant tool-call messages kept with their batches (C3b); 0 disables (C4). */
  keepRecentToolBatches: number;
  /** Replace large inputs of cleared calls with a JSON placeholder (C7). */
  clearToolInputs: boolean;
}

/** Defaults: enabled, trigger 40,000, keep 2 tool uses and 2 recent batches, clear inputs. */
export const DEFAULT_CLEARING_POLICY: Readonly<ClearingPolicy> = Object.freeze({
  enabled: true,
  triggerTokens: 40_000,
  keepToolUses: 2,
  keepRecentToolBatches: 2,
  clearToolInputs: true,
});

/** Fills a partial policy with the defaults; counts are coerced to non-negative integers. */
export function completeClearingPolicy(partial: Partial<ClearingPolicy> = {}): ClearingPolicy {
  const count = (v: number | undefined, d: number): number =>
    v === undefined || Number.isNaN(v) ? d : Math.max(0, Math.floor(Math.min(v, Number.MAX_SAFE_INTEGER)));
  return {
    enabled: partial.enabled ?? DEFAULT_CLEARING_POLICY.enabled,
    triggerTokens: count(partial.triggerTokens, DEFAULT_CLEARING_POLICY.triggerTokens),
    keepToolUses: count(partial.keepToolUses, DEFAULT_CLEARING_POLICY.keepToolUses),
    keepRecentToolBatches: count(
      partial.keepRecentToolBatches,
      DEFAULT_CLEARING_POLICY.keepRecentToolBatches,
    ),
    clearToolInputs: partial.clearToolInputs ?? DEFAULT_CLEARING_POLICY.clearToolInputs,
  };
}
