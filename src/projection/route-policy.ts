/**
 * Per-route compaction tuning: VT Code's `CompactionRoutePolicy`. Routes are matched by
 * provider and model substring in a table that starts empty, so every route gets the
 * defaults until one demonstrates a need.
 */

/** How compaction behaves on one provider/model route. */
export interface RoutePolicy {
  /** Caps the compaction threshold at `floor(capacity × ratio)`; only values below 1 have an effect. */
  thresholdRatio: number;
  /** Fraction of the window kept as continuity tail after a local summary. */
  retainRatio: number;
  /** Capacity-error retries of a summary call. */
  maxOverflowRetries: number;
}

/** One row of the route table: the first row whose substrings both match wins. */
export interface RoutePolicyEntry {
  /** Substring of the provider name (case-insensitive); empty matches every provider. */
  provider: string;
  /** Substring of the model id (case-insensitive); empty matches every model. */
  model: string;
  /** Fields that differ from {@link DEFAULT_ROUTE_POLICY}. */
  policy: Partial<RoutePolicy>;
}

/** VT Code defaults (1.0, 0.16, 1): they preserve behaviour without a route override. */
export const DEFAULT_ROUTE_POLICY: Readonly<RoutePolicy> = Object.freeze({
  thresholdRatio: 1.0,
  retainRatio: 0.16,
  maxOverflowRetries: 1,
});

/** The built-in route table; intentionally empty. */
export const ROUTE_POLICIES: readonly RoutePolicyEntry[] = Object.freeze([]);

/** Fills a partial policy with defaults, clamping ratios into [0, 1] and retries to a non-negative integer. */
export function completeRoutePolicy(partial: Partial<RoutePolicy> = {}): RoutePolicy {
  const ratio = (v: number | undefined, d: number): number =>
    v === undefined || Number.isNaN(v) ? d : Math.min(1, Math.max(0, v));
  const retries = partial.maxOverflowRetries;
  return {
    thresholdRatio: ratio(partial.thresholdRatio, DEFAULT_ROUTE_POLICY.thresholdRatio),
    retainRatio: ratio(partial.retainRatio, DEFAULT_ROUTE_POLICY.retainRatio),
    maxOverflowRetries:
      retries === undefined || Number.isNaN(retries)
        ? DEFAULT_ROUTE_POLICY.maxOverflowRetries
        : Math.max(0, Math.floor(Math.min(retries, Number.MAX_SAFE_INTEGER))),
  };
}

/**
 * Resolves the policy for a route: the first table entry whose provider and model
 * substrings both occur (case-insensitively) wins; no match gives the defaults.
 */
export function resolveRoutePolicy(
  provider: string,
  model: string,
  table: readonly RoutePolicyEntry[] = ROUTE_POLICIES,
): RoutePolicy {
  const p = provider.toLowerCase();
  const m = model.toLowerCase();
  const hit = table.find((e) => p.includes(e.provider.toLowerCase()) && m.includes(e.model.toLowerCase()));
  return completeRoutePolicy(hit?.policy);
}
