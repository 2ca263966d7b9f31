import { existsSync } from 'node:fs';
import { readRegularText } from '../io/read-regular.js';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { HTTP_LIMITS_SHAPE } from '../providers/http-limits.js';
import { CLEARING_PRESET_NAMES } from '../projection/index.js';

const nonNeg = z.number().int().nonnegative();

/**
 * `compactor.config.json` (optional, in the working directory or named by --config).
 * Every section is optional; unknown keys are errors so typos do not pass silently.
 * Command-line flags override these values.
 */
export const CompactorConfigSchema = z
  .object({
    encoding: z.enum(['o200k_base', 'cl100k_base', 'chars']).optional(),
    // Clearing preset: `compactor` (the defaults) or `vtcode` (the seed's VT Code defaults).
    preset: z.enum(CLEARING_PRESET_NAMES).optional(),
    limits: z
      .object({
        capacity: nonNeg.optional(),
        sessionCeiling: nonNeg.optional(),
        reservedOutput: nonNeg.optional(),
        prefixTokens: nonNeg.optional(),
        trigger: nonNeg.optional(),
      })
      .strict()
      .optional(),
    toolResultClearing: z
      .object({
        enabled: z.boolean().optional(),
        triggerTokens: nonNeg.optional(),
        keepToolUses: nonNeg.optional(),
        keepRecentToolBatches: nonNeg.optional(),
        clearToolInputs: z.boolean().optional(),
        // Opt-in, outside SPEC B4 (whose 0.5 is the default); 0 would disable the evidence window.
        evidenceWindowRatio: z.number().gt(0).lte(1).optional(),
        // Cache-aware clearing (issue 16): clear in steps of at least N tokens; compaction waits for a cache break.
        clearAtLeast: nonNeg.optional(),
        compactionWaitsForCacheBreak: z.boolean().optional(),
        compactionWaitRatio: z.number().gt(0).lt(1).optional(),
        compactionWaitMaxTokens: nonNeg.optional(),
        compactionWaitByCost: z.boolean().optional(),
        clearWhenPassBuysFewerTurns: nonNeg.optional(),
      })
      .strict()
      .optional(),
    compaction: z
      .object({
        threshold: nonNeg.optional(),
        thresholdRatio: z.number().gt(0).lte(1).optional(),
        retainRatio: z.number().gte(0).lte(1).optional(),
        maxOverflowRetries: nonNeg.optional(),
        reinjectBudgetTokens: nonNeg.optional(),
      })
      .strict()
      .optional(),
    provider: z
      .object({
        kind: z.string().optional(),
        model: z.string().optional(),
        baseUrl: z.string().url().optional(),
        apiKeyEnv: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .optional(),
      })
      .strict()
      .optional(),
    // Provider time limits, the library's `http` option (--timeout, --retries, --retry-budget).
    http: z.object(HTTP_LIMITS_SHAPE).strict().optional(),
    // `compactor serve`: the same settings as its flags (flags win).
    serve: z
      .object({
        host: z.string().min(1).optional(),
        port: nonNeg.max(65_535).optional(),
        dataDir: z.string().min(1).optional(),
        anthropicUpstream: z.string().url().optional(),
        openaiUpstream: z.string().url().optional(),
        capacity: z.number().int().positive().optional(),
        authTokenEnv: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/)
          .optional(),
        summarizer: z.enum(['upstream', 'offline']).optional(),
        maxBodyBytes: z.number().int().positive().optional(),
      })
      .strict()
      .optional(),
    // --inspect=stately: the relay's port on 127.0.0.1 and how long a run waits for a viewer.
    inspect: z
      .object({
        port: nonNeg.max(65_535).optional(),
        waitSeconds: z.number().gte(0).lte(3_600).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();
export type CompactorConfig = z.infer<typeof CompactorConfigSchema>;

export const CONFIG_FILE_NAME = 'compactor.config.json';

/**
 * Loads and validates the config. `explicitPath` (from --config) must exist; the default
 * file in `cwd` is optional. Errors name the file and the field.
 */
export function loadConfig(cwd: string, explicitPath?: string): CompactorConfig {
  const path = explicitPath ?? join(cwd, CONFIG_FILE_NAME);
  if (!explicitPath && !existsSync(path)) return {};
  // A config file is small; the cap keeps `--config /dev/urandom` or a huge file from hanging.
  const text = readRegularText(path, 'config file', 1024 * 1024);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new UserError(`${path}: invalid JSON: ${(e as Error).message}`);
  }
  const r = CompactorConfigSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    throw new UserError(`${path}: ${where}: ${issue.message}`);
  }
  return r.data;
}
