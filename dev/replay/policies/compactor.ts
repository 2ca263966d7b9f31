import { projectRequest } from '../../../src/projection/project-request.js';
import type { ClearingPolicy } from '../../../src/projection/clearing-policy.js';
import type { RetentionPolicy } from '../types.js';

/** Every policy's baseline: the history as it is (after pairing repair), nothing cleared. */
export const noClearingPolicy: RetentionPolicy = {
  name: 'no-clearing',
  description: 'No clearing: the normalized history is sent as is (compaction alone bounds it).',
  source: 'baseline',
  project: (history) => Promise.resolve(history),
};

/**
 * Compactor's projection (SPEC §5) with its defaults, or with `keepRecentToolBatches`
 * overridden: the bounded retention pilot compares settings 2 (default) and 0.
 */
export function compactorPolicy(keepRecentToolBatches?: number): RetentionPolicy {
  const name = keepRecentToolBatches === undefined ? 'compactor' : `compactor-keep${keepRecentToolBatches}`;
  return {
    name,
    description:
      keepRecentToolBatches === undefined
        ? 'Compactor defaults: trigger min(40,000, 3/5 of history budget), evidence window = trigger/2, keep 2 tool uses + 2 recent batches (C1–C7).'
        : `Compactor with keepRecentToolBatches = ${keepRecentToolBatches} (retention pilot setting), other defaults unchanged.`,
    source: 'compactor',
    project(history, ctx) {
      const policy = keepRecentToolBatches === undefined ? undefined : { keepRecentToolBatches };
      return Promise.resolve(
        projectRequest(history, { limits: ctx.limits, policy, estimator: ctx.estimator }).messages,
      );
    },
  };
}

/**
 * Compactor with the opt-in `evidenceWindowRatio` (evidence budget = floor(local trigger × ratio)
 * instead of B4's / 2), other defaults unchanged: the pilot measures where wider windows land.
 */
export function compactorEvidencePolicy(evidenceWindowRatio: number): RetentionPolicy {
  return {
    name: `compactor-evidence-${evidenceWindowRatio}`,
    description: `Compactor defaults with evidenceWindowRatio = ${evidenceWindowRatio} (opt-in; evidence window = ${evidenceWindowRatio} × trigger instead of B4's 0.5).`,
    source: 'compactor',
    project(history, ctx) {
      const policy = { evidenceWindowRatio };
      return Promise.resolve(
        projectRequest(history, { limits: ctx.limits, policy, estimator: ctx.estimator }).messages,
      );
    },
  };
}

/** A named Compactor setting: the library's projection with `policy` over the defaults. */
export function compactorVariant(
  name: string,
  policy: Partial<ClearingPolicy>,
  description: string,
): RetentionPolicy {
  return {
    name,
    description,
    source: 'compactor',
    compactionWaitsForCacheBreak: policy.compactionWaitsForCacheBreak === true,
    project(history, ctx) {
      return Promise.resolve(
        projectRequest(history, { limits: ctx.limits, policy, estimator: ctx.estimator }).messages,
      );
    },
  };
}
