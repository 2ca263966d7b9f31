import { projectRequest } from '../../../src/projection/project-request.js';
import { CLEARING_SETTINGS, type ClearingPolicy } from '../../../src/projection/clearing-policy.js';
import type { CompactionWaitSettings } from '../../../src/projection/session-settings.js';
import type { CompactorSetting, RetentionPolicy } from '../types.js';

/** A flat setting as the session takes it: the clearing keys are its `policy`, the rest its `compaction`. */
export function sessionSettingsOf(setting: CompactorSetting): {
  policy: Partial<ClearingPolicy>;
  compaction: Partial<CompactionWaitSettings>;
} {
  const policy: Record<string, unknown> = {};
  const compaction: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(setting))
    (Object.hasOwn(CLEARING_SETTINGS, k) ? policy : compaction)[k] = v;
  return { policy, compaction };
}

/** Every policy's baseline: the history as it is (after pairing repair), nothing cleared. */
export const noClearingPolicy: RetentionPolicy = {
  name: 'no-clearing',
  description: 'No clearing: the normalized history is sent as is (compaction alone bounds it).',
  source: 'baseline',
  project: (history) => Promise.resolve(history),
};

/**
 * A named Compactor setting: `policy` over its preset (default `compactor`), replayed through
 * a `createCompactorSession` with that policy; `project` is the library's projection alone.
 */
export function compactorVariant(
  name: string,
  policy: CompactorSetting,
  description: string,
): RetentionPolicy {
  return {
    name,
    description,
    source: 'compactor',
    clearing: policy,
    project(history, ctx) {
      return Promise.resolve(
        projectRequest(history, {
          limits: ctx.limits,
          policy: sessionSettingsOf(policy).policy,
          estimator: ctx.estimator,
        }).messages,
      );
    },
  };
}

/** Compactor with its defaults (preset `compactor`: no clearing before compaction, compaction waits for a cache break). */
export function compactorPolicy(): RetentionPolicy {
  return compactorVariant(
    'compactor',
    {},
    'Compactor defaults (preset compactor): tool results kept until compaction; while the cached prefix is intact, compaction waits 85 % of the way to the prompt budget, at most 7,000 tokens past the threshold, scaled down in windows over 32k (3,000 at 64k).',
  );
}

/**
 * VT Code's own defaults (preset `vtcode`), or with `keepRecentToolBatches` overridden:
 * the bounded retention pilot compares settings 2 (default) and 0.
 */
export function compactorVtcodePolicy(keepRecentToolBatches?: number): RetentionPolicy {
  const keep = keepRecentToolBatches === undefined ? {} : { keepRecentToolBatches };
  return compactorVariant(
    keepRecentToolBatches === undefined
      ? 'compactor-vtcode'
      : `compactor-vtcode-keep${keepRecentToolBatches}`,
    { preset: 'vtcode', ...keep },
    keepRecentToolBatches === undefined
      ? 'Compactor, preset vtcode (the seed): trigger min(40,000, 3/5 of history budget), evidence window = trigger/2, keep 2 tool uses + 2 recent batches (C1–C7).'
      : `Compactor, preset vtcode with keepRecentToolBatches = ${keepRecentToolBatches}.`,
  );
}

/**
 * The vtcode preset with the opt-in `evidenceWindowRatio` (evidence budget = floor(local trigger × ratio)
 * instead of the default / 2): the pilot measures where wider windows land.
 */
export function compactorEvidencePolicy(evidenceWindowRatio: number): RetentionPolicy {
  return compactorVariant(
    `compactor-evidence-${evidenceWindowRatio}`,
    { preset: 'vtcode', evidenceWindowRatio },
    `Compactor, preset vtcode with evidenceWindowRatio = ${evidenceWindowRatio} (evidence window = ${evidenceWindowRatio} × trigger instead of B4's 0.5).`,
  );
}
