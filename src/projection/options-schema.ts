import { z } from 'zod';
import type { Estimator } from '../estimate/estimator.js';
import { CLEARING } from './clearing-policy.js';

/**
 * zod schemas of the projection options. The names are the library's one vocabulary: the
 * session's `limits` and `policy` use the same fields, so one schema serves both.
 */

const count = z.number().int().nonnegative();

/** A partial tool-result clearing policy (the session's `policy`, the config's `toolResultClearing`). */
export const ClearingPolicyOptionsSchema = CLEARING.schema;

/** {@link Limits} as a caller passes them. */
export const LimitsSchema = z.strictObject({
  capacity: count.optional(),
  sessionCeiling: count.optional(),
  reservedOutput: count.optional(),
  prefixTokens: count.optional(),
  trigger: count.optional(),
  // Outside (0, 1] means "not set" here (the policy's ratio applies), so 0 is allowed.
  evidenceWindowRatio: z.number().optional(),
  threshold: count.optional(),
  routePolicy: z
    .strictObject({
      thresholdRatio: z.number().gt(0).lte(1),
      retainRatio: z.number().gte(0).lte(1),
      maxOverflowRetries: count,
    })
    .partial()
    .optional(),
  summaryOutputLimit: count.optional(),
  summaryInstructionsTokens: count.optional(),
});

const EstimatorSchema = z.custom<Estimator>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Estimator).history === 'function' &&
    typeof (v as Estimator).message === 'function',
  'expected an estimator from createEstimator()',
);

/** Options of `projectRequest`. */
export const ProjectRequestOptionsSchema = z.strictObject({
  limits: LimitsSchema,
  policy: ClearingPolicyOptionsSchema.optional(),
  estimator: EstimatorSchema,
  interactive: z.boolean().optional(),
  nativeContextEdits: z.boolean().optional(),
  leadingSystemAsPrefix: z.boolean().optional(),
  keepCleared: z
    .custom<ReadonlySet<string>>((v) => v instanceof Set, 'expected a Set of call ids')
    .optional(),
});
