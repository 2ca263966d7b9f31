import type { Limits } from './budgets.js';
import { completeClearingPolicy, isEvidenceWindowRatio, type ClearingPolicy } from './clearing-policy.js';

/**
 * The limits a request is actually budgeted with: the configured trigger is
 * `limits.trigger`, else the clearing policy's `triggerTokens`; the evidence
 * window ratio is `limits.evidenceWindowRatio`, else the policy's (default 0.5). Every place
 * that reports or uses budgets goes through this, so diagnostics match the projection.
 */
export function effectiveLimits(limits: Limits, policy?: Partial<ClearingPolicy>): Limits {
  const p = completeClearingPolicy(policy);
  return {
    ...limits,
    trigger: limits.trigger || p.triggerTokens,
    evidenceWindowRatio: isEvidenceWindowRatio(limits.evidenceWindowRatio)
      ? limits.evidenceWindowRatio
      : p.evidenceWindowRatio,
  };
}
