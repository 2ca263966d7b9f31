import {
  CLEARING,
  COMPACTION,
  LIMITS,
  type ClearingPolicy,
  type CompactionSettings,
  type SessionLimits,
} from '../projection/index.js';
import { HTTP, type HttpLimits } from '../providers/http-limits.js';
import type { CompactorConfig } from './config.js';

/**
 * The settings flags of every command, read from the settings tables: the parseArgs options,
 * their zod shapes, their help, and the flags-over-config merge that gives the library options.
 */

/** parseArgs options and zod shape of the limit flags (`plan`, `project`, `run`, `compact`), with `--evidence-ratio`. */
export const LIMIT_OPTIONS = {
  ...LIMITS.flagOptions,
  'evidence-ratio': CLEARING.flagOptions['evidence-ratio'],
};
export const LIMIT_FLAG_SHAPE = {
  ...LIMITS.flagShape,
  'evidence-ratio': CLEARING.flagShape['evidence-ratio'],
};

/** parseArgs options and zod shape of the clearing flags (`project`, `run`, `compact`). */
export const CLEARING_OPTIONS = CLEARING.flagOptions;
export const CLEARING_FLAG_SHAPE = CLEARING.flagShape;

/** Help of the clearing flags (every command that takes them). */
export const CLEARING_HELP = CLEARING.help(26);

/** The library's `limits`, `policy`, `compaction` and `http` limits: each table's flags over its config section. */
export function settingsFrom(
  flags: Record<string, unknown>,
  config: CompactorConfig,
): {
  limits: SessionLimits;
  policy: Partial<ClearingPolicy>;
  compaction: CompactionSettings;
  http: Partial<HttpLimits>;
} {
  const preset = (flags.preset as ClearingPolicy['preset'] | undefined) ?? config.preset;
  return {
    limits: { ...config.limits, ...LIMITS.fromFlags(flags) },
    policy: {
      ...(preset !== undefined ? { preset } : {}),
      ...config.toolResultClearing,
      ...CLEARING.fromFlags(flags),
    },
    compaction: { ...config.compaction, ...COMPACTION.fromFlags(flags) },
    http: { ...config.http, ...HTTP.fromFlags(flags) },
  };
}
