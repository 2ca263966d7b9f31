import { parseOptions } from '../core/parse-options.js';
import type { Estimator } from '../estimate/estimator.js';
import type { Message } from '../messages/message.js';
import { resolveBudgets, type Budgets, type Limits } from './budgets.js';
import { effectiveLimits } from './effective-limits.js';
import { completeClearingPolicy, type ClearingPolicy } from './clearing-policy.js';
import { clearOldToolResultsWithRecentBatches } from './clear-tool-results.js';
import type { ProjectionDiagnostics } from './diagnostics.js';
import { normalizeWithPairing } from './normalize.js';
import { ProjectRequestOptionsSchema } from './options-schema.js';

/** Inputs of {@link projectRequest}. */
export interface ProjectRequestOptions {
  limits: Limits;
  policy?: Partial<ClearingPolicy>;
  estimator: Estimator;
  /** Interactive request; headless (the default) always uses local clearing. */
  interactive?: boolean;
  /** The request carries Anthropic native context edits; only honoured when interactive. */
  nativeContextEdits?: boolean;
  /**
   * The history's leading system messages are the prompt prefix already counted in
   * `limits.prefixTokens`: they pass through unchanged and are not counted again as history.
   */
  leadingSystemAsPrefix?: boolean;
  /** Call ids whose results the request sent last had cleared: they stay cleared (same stub text). */
  keepCleared?: ReadonlySet<string>;
}

/** The request projection, what it cost, and the budgets it was computed with. */
export interface ProjectedRequest {
  messages: readonly Message[];
  diagnostics: ProjectionDiagnostics;
  budgets: Budgets;
}

/**
 * Builds the request projection from durable history (the turn's normalize and clear steps):
 * repair tool-call pairing, then apply local tool-result clearing against the resolved budgets.
 * The configured trigger is `limits.trigger`, else `policy.triggerTokens`;
 * likewise the evidence window ratio is `limits.evidenceWindowRatio`, else the policy's (0.5).
 * Never mutates `history`; returns it as is when it is valid and nothing is cleared.
 * Bad options throw one `CompactorOptionsError`.
 */
export function projectRequest(
  history: readonly Message[],
  options: ProjectRequestOptions,
): ProjectedRequest {
  // The parsed copy drops nothing we use, but keep the caller's estimator object (its caches).
  const opts = {
    ...parseOptions(ProjectRequestOptionsSchema, options, 'projectRequest: options'),
    estimator: options.estimator,
  };
  const lead = opts.leadingSystemAsPrefix ? leadingSystemCount(history) : 0;
  if (lead === 0) return projectHistory(history, opts);
  const projected = projectHistory(history.slice(lead), opts);
  return { ...projected, messages: [...history.slice(0, lead), ...projected.messages] };
}

/**
 * {@link projectRequest} of a history that {@link normalizeWithPairing} already normalized:
 * the projection reuses that result instead of normalizing again. Its options are a turn's
 * settings, validated once when they were resolved: not parsed again on every request.
 */
export function projectNormalized(
  normalized: ReturnType<typeof normalizeWithPairing>,
  options: ProjectRequestOptions,
): ProjectedRequest {
  return projectHistory(normalized.messages, options, normalized);
}

/** Number of system messages at the start of `history` (the prompt prefix of a transcript). */
export function leadingSystemCount(history: readonly Message[]): number {
  let n = 0;
  while (n < history.length && history[n].role === 'system') n++;
  return n;
}

function projectHistory(
  history: readonly Message[],
  opts: ProjectRequestOptions,
  done: ReturnType<typeof normalizeWithPairing> = normalizeWithPairing(history),
): ProjectedRequest {
  const policy = completeClearingPolicy(opts.policy);
  const budgets = resolveBudgets(effectiveLimits(opts.limits, policy));
  const { messages: normalized, pairing } = done;
  // Native Anthropic edits and local clearing are mutually exclusive; headless never carries native edits.
  const native = opts.interactive === true && opts.nativeContextEdits === true;
  const cleared = clearOldToolResultsWithRecentBatches(normalized, {
    estimator: opts.estimator,
    policy: native ? { ...policy, enabled: false } : policy,
    localTrigger: budgets.localTrigger,
    evidenceBudget: budgets.evidenceBudget,
    pairing: pairing ?? undefined,
    ...(opts.keepCleared !== undefined ? { keepCleared: opts.keepCleared } : {}),
  });
  const diagnostics: ProjectionDiagnostics = {
    ...cleared.diagnostics,
    originalTokens:
      normalized === history ? cleared.diagnostics.originalTokens : opts.estimator.history(history),
    // Anthropic clears on its side when the request asks it to, so ours would clear twice.
    reason: native
      ? "skipped: the request carries Anthropic's native context edits, which clear old tool results on the provider's side"
      : cleared.diagnostics.reason,
  };
  return { messages: cleared.messages, diagnostics, budgets };
}
