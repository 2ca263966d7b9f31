import { existsSync } from 'node:fs';
import { readRegularText } from '../io/read-regular.js';
import { join } from 'node:path';
import { z } from 'zod';
import { UserError } from '../core/errors.js';
import { firstIssue } from '../core/parse-options.js';
import { HTTP } from '../providers/http-limits.js';
import { CLEARING, CLEARING_PRESET_NAMES, COMPACTION, LIMITS } from '../projection/index.js';
import { ROUTE } from '../providers/route-settings.js';
import { SERVE } from '../serve/settings.js';
import { INSPECT } from './inspect-flags.js';

/**
 * `compactor.config.json` (optional, in the working directory or named by --config).
 * Every section is optional; unknown keys are errors so typos do not pass silently.
 * Command-line flags override these values. The `limits`, `toolResultClearing`, `compaction`,
 * `http`, `provider` (the library's `route`), `inspect` and `serve` sections are read from their tables.
 */
export const CompactorConfigSchema = z
  .object({
    encoding: z
      .enum(['o200k_base', 'cl100k_base', 'chars'])
      .optional()
      .describe("Token counting: a tiktoken encoding or `chars` (default: the route's)."),
    preset: z
      .enum(CLEARING_PRESET_NAMES)
      .optional()
      .describe('Clearing preset (`--preset`): `compactor` (default) or `vtcode`; see Tool-result clearing.'),
    limits: LIMITS.configSchema.optional(),
    toolResultClearing: CLEARING.configSchema.optional(),
    compaction: COMPACTION.configSchema.optional(),
    provider: ROUTE.configSchema.optional(),
    http: HTTP.configSchema.optional(),
    inspect: INSPECT.configSchema.optional(),
    serve: SERVE.configSchema.optional(),
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
    const { field, message } = firstIssue(r.error);
    throw new UserError(`${path}: ${field || '(root)'}: ${message}`);
  }
  return r.data;
}
