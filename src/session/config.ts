import type { Estimator } from '../estimate/estimator.js';
import { resolveRoutePolicy, type SessionConfig } from '../projection/index.js';
import { resolveRunConfig, type ResolvedConfig } from '../runtime/index.js';
import type { CompactorSessionOptions } from './options.js';
import type { RequestEnvelope } from './parent-context.js';
import type { SessionRoute } from './route.js';

/** Estimated prompt overhead of an envelope: system prompt + tool schemas (taken off the history budget). */
export function envelopeTokens(envelope: RequestEnvelope | undefined, estimator: Estimator): number {
  if (!envelope) return 0;
  let n = envelope.system ? estimator.text(envelope.system) : 0;
  if (envelope.tools && envelope.tools.length > 0) n += estimator.text(JSON.stringify(envelope.tools));
  return n;
}

export type { SessionConfig };

/**
 * The session's settings resolved once, frozen, and passed down unchanged: the limits, the
 * complete clearing policy, the compaction settings with the wait filled in, the budgets, and
 * the numbers every turn decides by (`turn`).
 */
export type ResolvedSessionConfig = ResolvedConfig;

/**
 * The session's one resolved configuration, computed here. It depends on the envelope only
 * when the prefix is estimated, so the session resolves it again when the envelope changes.
 * Resolves validated options (the top-level `preset` folded into `policy`) against the route
 * (its catalog window and route policy) and the envelope (the estimated prefix).
 */
export function resolveConfig(
  options: Pick<CompactorSessionOptions, 'limits' | 'policy' | 'compaction' | 'preset' | 'loopGuardPolicy'>,
  route: Pick<SessionRoute, 'provider' | 'model' | 'contextWindow'>,
  envelope: RequestEnvelope | undefined,
  estimator: Estimator,
): ResolvedSessionConfig {
  // The top-level preset is shorthand for policy.preset (which wins when both are given).
  const policy =
    options.preset === undefined ? options.policy : { preset: options.preset, ...options.policy };
  return resolveRunConfig(
    { limits: options.limits, policy, compaction: options.compaction, loopGuard: options.loopGuardPolicy },
    {
      contextWindow: route.contextWindow,
      prefixTokens:
        options.limits?.prefixTokens === undefined ? envelopeTokens(envelope, estimator) : undefined,
      routePolicy: resolveRoutePolicy(route.provider, route.model),
    },
  );
}
