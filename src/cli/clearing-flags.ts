import { z } from 'zod';
import { CLEARING_PRESET_NAMES, type ClearingPolicy } from '../projection/index.js';
import type { CommandContext } from './command.js';
import { flag } from './flags.js';

/** parseArgs options of the tool-result clearing flags (`project`, `run`, `compact`). */
export const CLEARING_OPTIONS = {
  preset: { type: 'string' },
  'keep-tool-uses': { type: 'string' },
  'keep-recent-batches': { type: 'string' },
  'no-clear-inputs': { type: 'boolean' },
  'no-clearing': { type: 'boolean' },
  'clear-at-least': { type: 'string' },
  'compaction-waits-for-cache-break': { type: 'boolean' },
  'compaction-wait-ratio': { type: 'string' },
  'compaction-wait-max': { type: 'string' },
  'compaction-wait-by-cost': { type: 'boolean' },
  'no-compaction-wait-by-cost': { type: 'boolean' },
  'clear-when-pass-buys-fewer': { type: 'string' },
} as const;

/** zod shape of {@link CLEARING_OPTIONS}, to extend a command's flag schema with. */
export const CLEARING_FLAG_SHAPE = {
  preset: z.enum(CLEARING_PRESET_NAMES).optional(),
  'keep-tool-uses': flag.nonNegInt.optional(),
  'keep-recent-batches': flag.nonNegInt.optional(),
  'no-clear-inputs': z.boolean().optional(),
  'no-clearing': z.boolean().optional(),
  'clear-at-least': flag.nonNegInt.optional(),
  'compaction-waits-for-cache-break': z.boolean().optional(),
  'compaction-wait-ratio': flag.ratio
    .refine((r) => r > 0 && r < 1, 'expected a number above 0 and below 1')
    .optional(),
  'compaction-wait-max': flag.nonNegInt.optional(),
  'compaction-wait-by-cost': z.boolean().optional(),
  'no-compaction-wait-by-cost': z.boolean().optional(),
  'clear-when-pass-buys-fewer': flag.nonNegInt.optional(),
};

/** Parsed clearing flags (plus `--evidence-ratio`, which the limit flags carry). */
export type ClearingFlags = z.infer<z.ZodObject<typeof CLEARING_FLAG_SHAPE>> & { 'evidence-ratio'?: number };

/** Clearing policy: the preset (flag, else config), config `toolResultClearing`, the clearing flags on top. */
export function clearingPolicyFrom(
  flags: ClearingFlags,
  ctx: Pick<CommandContext, 'config'>,
): Partial<ClearingPolicy> {
  const preset = flags.preset ?? ctx.config.preset;
  return {
    ...(preset !== undefined ? { preset } : {}),
    ...ctx.config.toolResultClearing,
    ...(flags['keep-tool-uses'] !== undefined ? { keepToolUses: flags['keep-tool-uses'] } : {}),
    ...(flags['keep-recent-batches'] !== undefined
      ? { keepRecentToolBatches: flags['keep-recent-batches'] }
      : {}),
    ...(flags['no-clear-inputs'] ? { clearToolInputs: false } : {}),
    ...(flags['no-clearing'] ? { enabled: false } : {}),
    ...(flags['clear-at-least'] !== undefined ? { clearAtLeast: flags['clear-at-least'] } : {}),
    ...(flags['compaction-waits-for-cache-break'] ? { compactionWaitsForCacheBreak: true } : {}),
    ...(flags['compaction-wait-ratio'] !== undefined
      ? { compactionWaitRatio: flags['compaction-wait-ratio'] }
      : {}),
    ...(flags['compaction-wait-max'] !== undefined
      ? { compactionWaitMaxTokens: flags['compaction-wait-max'] }
      : {}),
    ...(flags['compaction-wait-by-cost'] ? { compactionWaitByCost: true } : {}),
    // The default now, but it still overrides a config that turns the wait by cost on.
    ...(flags['no-compaction-wait-by-cost'] ? { compactionWaitByCost: false } : {}),
    ...(flags['evidence-ratio'] !== undefined ? { evidenceWindowRatio: flags['evidence-ratio'] } : {}),
    ...(flags['clear-when-pass-buys-fewer'] !== undefined
      ? { clearWhenPassBuysFewerTurns: flags['clear-when-pass-buys-fewer'] }
      : {}),
  };
}

/** Help lines of the cache-aware clearing flags (shared by every command that takes clearing flags). */
export const CACHE_AWARE_HELP = `  --preset NAME             clearing preset: compactor (default: keep tool results
                            until compaction, which waits while the prompt cache is
                            intact, and clear them instead where a summary would
                            buy few steps) or vtcode (VT Code's clearing from 40,000
                            tokens)
  --clear-when-pass-buys-fewer N
                            clear old tool results instead of compacting when a
                            summary would buy fewer than N steps like the newest
                            (default 10 with preset compactor; 0: never)
  --clear-at-least N        clear only in steps that free at least N tokens, so the
                            request prefix stays cached between steps (default 0: off)
  --compaction-waits-for-cache-break
                            put compaction off while the cached prefix is intact
                            (on by default with preset compactor)
  --compaction-wait-ratio R how far it waits: R of the way from the threshold to
                            the prompt budget, 0 < R < 1 (default 0.85) …
  --compaction-wait-max N   … but at most N tokens past the threshold (default 7000),
                            fewer in windows over 32k (3000 at 64k)
  --compaction-wait-by-cost wait only where the expected cost says waiting pays
                            (in large windows compaction then mostly runs at the
                            threshold; off by default)
  --no-compaction-wait-by-cost
                            wait whatever the expected cost (the default)`;
