import type { Estimator } from '../estimate/estimator.js';
import { resolveRoutePolicy, type Limits, type RoutePolicy } from '../projection/index.js';
import type { CompactionSettings, SessionLimits } from './options.js';
import type { RequestEnvelope } from './parent-context.js';
import type { SessionRoute } from './route.js';

/** Estimated prompt overhead of an envelope: system prompt + tool schemas (the history budget's prefix). */
export function envelopeTokens(envelope: RequestEnvelope | undefined, estimator: Estimator): number {
  if (!envelope) return 0;
  let n = envelope.system ? estimator.text(envelope.system) : 0;
  if (envelope.tools && envelope.tools.length > 0) n += estimator.text(JSON.stringify(envelope.tools));
  return n;
}

/**
 * The projection {@link Limits} of a session: the capacity is `limits.capacity`, else
 * the route's catalog window (32,000 offline); the prefix is `limits.prefixTokens`, else
 * estimated from the envelope; the route policy is the route table's entry with the session's
 * `compaction` overrides on top.
 */
export function sessionLimits(
  limits: SessionLimits,
  settings: CompactionSettings,
  route: Pick<SessionRoute, 'provider' | 'model' | 'contextWindow'>,
  envelope: RequestEnvelope | undefined,
  estimator: Estimator,
): Limits {
  const policy: RoutePolicy = resolveRoutePolicy(route.provider, route.model);
  if (settings.thresholdRatio !== undefined) policy.thresholdRatio = settings.thresholdRatio;
  if (settings.retainRatio !== undefined) policy.retainRatio = settings.retainRatio;
  if (settings.maxOverflowRetries !== undefined) policy.maxOverflowRetries = settings.maxOverflowRetries;
  return {
    capacity: limits.capacity ?? route.contextWindow ?? undefined,
    sessionCeiling: limits.sessionCeiling,
    reservedOutput: limits.reservedOutput ?? 0,
    prefixTokens: limits.prefixTokens ?? envelopeTokens(envelope, estimator),
    trigger: limits.trigger,
    threshold: limits.threshold,
    routePolicy: policy,
    summaryOutputLimit: limits.summaryOutputLimit,
  };
}
