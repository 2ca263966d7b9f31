import {
  DEFAULT_CLEARING_POLICY,
  DEFAULT_EVIDENCE_WINDOW_RATIO,
  isEvidenceWindowRatio,
} from './clearing-policy.js';
import { completeRoutePolicy, type RoutePolicy } from './route-policy.js';
import { mulDivFloor, satSub, toCount } from './saturating.js';
import { InternalError } from '../core/errors.js';

/**
 * Token limits of one request route. Every field is optional; 0, negative or NaN means
 * "not set" (a session ceiling of 0 is "automatic": the provider limit alone).
 */
export interface Limits {
  /** The model's context window (the same name as the session's `limits.capacity`). */
  capacity?: number;
  /** A user/session cap on the window; 0 = automatic (capacity alone). */
  sessionCeiling?: number;
  /** Output tokens reserved from the window (the request's max output). Default 0. */
  reservedOutput?: number;
  /** Prompt overhead outside history: system prompt + tool schemas (the frozen parent prefix). */
  prefixTokens?: number;
  /** Configured clearing trigger (`limits.trigger`, else `policy.triggerTokens`); default 40,000. */
  trigger?: number;
  /**
   * Opt-in evidence window ratio (`policy.evidenceWindowRatio`); a value outside
   * (0, 1] is "not set", which keeps the default 0.5 (half the local trigger).
   */
  evidenceWindowRatio?: number;
  /** Explicit compaction threshold; wins over the 75 % default, capped at the prompt budget. */
  threshold?: number;
  /** Per-route tuning (threshold ratio, retain ratio, retries); missing fields take the defaults. */
  routePolicy?: Partial<RoutePolicy>;
  /** Explicit output limit of the summary call, subtracted from the summary input budget. */
  summaryOutputLimit?: number;
  /** Tokens of the summary instructions, which also consume the summary input budget. */
  summaryInstructionsTokens?: number;
}

/** Every budget derived from {@link Limits}; `null` means "unknown" (capacity unknown). */
export interface Budgets {
  /** Capacity: min of the positive provider limit and positive session ceiling. */
  capacity: number | null;
  /** History budget: capacity − reserved output − prefix, saturating. */
  historyBudget: number | null;
  /** Effective local clearing trigger (always ≥ 1). */
  localTrigger: number;
  /** Evidence window of clearing: floor(localTrigger / 2); floor(localTrigger × ratio) when opted in. */
  evidenceBudget: number;
  /** Compaction threshold; null when neither capacity nor an explicit value is known. */
  compactionThreshold: number | null;
  /** Input allowance of a local summary call; null = unknown (first fork verbatim). */
  summaryInputBudget: number | null;
  /** Continuity tail target after a local summary. */
  continuityTailTokens: number | null;
}

/** Default compaction trigger as a percentage of the prompt budget. */
export const DEFAULT_COMPACTION_PERCENT = 75;
/** Safety headroom of a local summary call: floor(window / 8) + 512. */
export const SUMMARY_HEADROOM_DENOMINATOR = 8;
export const SUMMARY_HEADROOM_FIXED_TOKENS = 512;
/** Continuity tail bounds (the recent messages kept verbatim after a local summary). */
export const CONTINUITY_TAIL_MAX_TOKENS = 20_000;
export const CONTINUITY_TAIL_MIN_TOKENS = 1_024;

/** Capacity: the smaller positive of provider limit and session ceiling; null when neither is set. */
export function resolveCapacity(providerLimit?: number, sessionCeiling?: number): number | null {
  const p = toCount(providerLimit);
  const s = toCount(sessionCeiling);
  if (p > 0 && s > 0) return Math.min(p, s);
  if (p > 0) return p;
  if (s > 0) return s;
  return null;
}

/** Local trigger: `min(configured, max(1, floor(historyBudget × 3/5)))`; unknown budget: configured. */
export function resolveLocalTrigger(configuredTrigger: number, historyBudget: number | null): number {
  if (historyBudget === null) return configuredTrigger;
  return Math.min(configuredTrigger, Math.max(1, mulDivFloor(historyBudget, 3, 5)));
}

/**
 * The evidence budget, `floor(localTrigger × ratio)`; the default ratio 0.5 gives exactly
 * `floor(localTrigger / 2)`. The ratio is read as the decimal it prints as (0.29 is 29/100), so
 * `floor(100 × 0.29)` is 29, not the 28 of binary floating point; a ratio outside (0, 1] (or NaN)
 * means "not set" and keeps 0.5. Saturating: the result is a safe integer in [0, localTrigger].
 */
export function resolveEvidenceBudget(localTrigger: number, ratio?: number): number {
  const trigger = toCount(localTrigger);
  const r = isEvidenceWindowRatio(ratio) ? ratio : DEFAULT_EVIDENCE_WINDOW_RATIO;
  const { numerator, denominator } = decimalFraction(r);
  // BigInt keeps the product exact at any trigger; the quotient is ≤ trigger, so it is safe.
  return Number((BigInt(trigger) * numerator) / denominator);
}

/** The exact decimal fraction of a positive number's shortest round-trip text ("0.29", "1e-7"). */
function decimalFraction(value: number): { numerator: bigint; denominator: bigint } {
  const m = /^(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(value));
  if (m === null) throw new InternalError(`not a finite positive number: ${value}`);
  const fraction = m[2] ?? '';
  const scale = fraction.length - Number(m[3] ?? 0);
  const digits = BigInt(m[1] + fraction);
  return scale >= 0
    ? { numerator: digits, denominator: 10n ** BigInt(scale) }
    : { numerator: digits * 10n ** BigInt(-scale), denominator: 1n };
}

/**
 * Compaction threshold: 75 % of `max(capacity − reserved, 1)` (at least 1); an explicit threshold
 * wins, capped at that prompt budget; a route `thresholdRatio` below 1 can only lower it.
 */
export function resolveCompactionThreshold(
  capacity: number | null,
  reservedOutput: number,
  explicit: number,
  thresholdRatio: number,
): number | null {
  if (capacity === null) return explicit > 0 ? explicit : null;
  const promptBudget = Math.max(satSub(capacity, reservedOutput), 1);
  let t =
    explicit > 0
      ? Math.min(explicit, promptBudget)
      : Math.max(1, mulDivFloor(promptBudget, DEFAULT_COMPACTION_PERCENT, 100));
  if (thresholdRatio < 1) t = Math.min(t, Math.max(1, Math.floor(capacity * thresholdRatio)));
  return t;
}

/** Summary input: window − (floor(window/8) + 512) − prefix − output limit − instructions, saturating. */
export function resolveSummaryInputBudget(
  capacity: number | null,
  prefixTokens: number,
  summaryOutputLimit: number,
  instructionsTokens: number,
): number | null {
  if (capacity === null) return null;
  let b = satSub(capacity, Math.floor(capacity / SUMMARY_HEADROOM_DENOMINATOR));
  for (const cost of [SUMMARY_HEADROOM_FIXED_TOKENS, prefixTokens, summaryOutputLimit, instructionsTokens])
    b = satSub(b, cost);
  return b;
}

/** Continuity tail: `min(20,000, floor(window × retainRatio))`, at least 1,024; null when unknown. */
export function resolveContinuityTail(capacity: number | null, retainRatio: number): number | null {
  if (capacity === null) return null;
  const scaled = Math.floor(capacity * retainRatio);
  return Math.max(CONTINUITY_TAIL_MIN_TOKENS, Math.min(CONTINUITY_TAIL_MAX_TOKENS, scaled));
}

/** The output tokens the limits reserve (none when unset or negative). */
export function reservedOutputOf(limits: Pick<Limits, 'reservedOutput'>): number {
  return Math.max(0, limits.reservedOutput ?? 0);
}

/**
 * Resolves every budget of a request route; `limits.evidenceWindowRatio`
 * (opt-in, default 0.5) scales the evidence budget. Pure; all arithmetic
 * saturates, so absurd inputs (0, negative, NaN, 1e300) give bounded, non-negative results.
 */
export function resolveBudgets(limits: Limits): Budgets {
  const capacity = resolveCapacity(limits.capacity, limits.sessionCeiling);
  const reserved = toCount(limits.reservedOutput);
  const prefix = toCount(limits.prefixTokens);
  const route = completeRoutePolicy(limits.routePolicy);
  const configured = toCount(limits.trigger) || DEFAULT_CLEARING_POLICY.triggerTokens;

  const historyBudget = capacity === null ? null : satSub(satSub(capacity, reserved), prefix);
  const localTrigger = resolveLocalTrigger(configured, historyBudget);
  return {
    capacity,
    historyBudget,
    localTrigger,
    evidenceBudget: resolveEvidenceBudget(localTrigger, limits.evidenceWindowRatio),
    compactionThreshold: resolveCompactionThreshold(
      capacity,
      reserved,
      toCount(limits.threshold),
      route.thresholdRatio,
    ),
    summaryInputBudget: resolveSummaryInputBudget(
      capacity,
      prefix,
      toCount(limits.summaryOutputLimit),
      toCount(limits.summaryInstructionsTokens),
    ),
    continuityTailTokens: resolveContinuityTail(capacity, route.retainRatio),
  };
}
