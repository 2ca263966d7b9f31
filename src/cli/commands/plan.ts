import { z } from 'zod';
import type { Command, CommandContext, ParsedArgs } from '../command.js';
import { UserError } from '../errors.js';
import { flag, parseFlags } from '../flags.js';
import { resolveBudgets, type Budgets, type Limits } from '../../projection/index.js';

/** The limit flags shared by `plan` and `project` (node:util parseArgs options). */
export const LIMIT_OPTIONS = {
  capacity: { type: 'string' },
  'session-ceiling': { type: 'string' },
  'reserved-output': { type: 'string' },
  'prefix-tokens': { type: 'string' },
  trigger: { type: 'string' },
} as const;

/** zod shape of {@link LIMIT_OPTIONS}; errors name the flag. */
export const LimitFlagsSchema = z.object({
  capacity: flag.nonNegInt.optional(),
  'session-ceiling': flag.nonNegInt.optional(),
  'reserved-output': flag.nonNegInt.optional(),
  'prefix-tokens': flag.nonNegInt.optional(),
  trigger: flag.posInt.optional(),
});
export type LimitFlags = z.infer<typeof LimitFlagsSchema>;

export const LIMIT_FLAGS_HELP = `  --capacity N          model context window in tokens (config limits.capacity)
  --session-ceiling N   session cap on the window; 0 = automatic (config limits.sessionCeiling)
  --reserved-output N   output tokens reserved from the window (config limits.reservedOutput)
  --prefix-tokens N     system prompt + tool schema tokens (config limits.prefixTokens)
  --trigger N           configured clearing trigger (config limits.trigger or
                        toolResultClearing.triggerTokens; default 40000)`;

/** Limits from flags over config (`limits`, `toolResultClearing.triggerTokens`, `compaction`). */
export function limitsFrom(flags: LimitFlags, ctx: CommandContext): Limits {
  const cfg = ctx.config.limits ?? {};
  const compaction = ctx.config.compaction ?? {};
  const routePolicy = {
    ...(compaction.thresholdRatio !== undefined ? { thresholdRatio: compaction.thresholdRatio } : {}),
    ...(compaction.retainRatio !== undefined ? { retainRatio: compaction.retainRatio } : {}),
    ...(compaction.maxOverflowRetries !== undefined
      ? { maxOverflowRetries: compaction.maxOverflowRetries }
      : {}),
  };
  return {
    providerLimit: flags.capacity ?? cfg.capacity,
    sessionCeiling: flags['session-ceiling'] ?? cfg.sessionCeiling,
    reservedOutput: flags['reserved-output'] ?? cfg.reservedOutput,
    prefixTokens: flags['prefix-tokens'] ?? cfg.prefixTokens,
    configuredTrigger: flags.trigger ?? cfg.trigger ?? ctx.config.toolResultClearing?.triggerTokens,
    compactionThreshold: compaction.threshold,
    routePolicy,
  };
}

const fmt = (n: number | null): string => (n === null ? 'unknown' : n.toLocaleString('en-US'));

/** The human-readable budget table with the formula behind each line. */
export function renderBudgets(b: Budgets, limits: Limits): string {
  const reserved = limits.reservedOutput ?? 0;
  const prefix = limits.prefixTokens ?? 0;
  const rows: Array<[string, number | null, string]> = [
    ['capacity', b.capacity, 'min of positive provider limit and session ceiling (B1)'],
    [
      'history budget',
      b.historyBudget,
      `capacity − reserved output ${fmt(reserved)} − prefix ${fmt(prefix)} (B2)`,
    ],
    [
      'local trigger',
      b.localTrigger,
      b.historyBudget === null
        ? 'configured trigger; capacity unknown (B3)'
        : 'min(configured trigger, 3/5 × history budget) (B3)',
    ],
    ['evidence budget', b.evidenceBudget, 'local trigger / 2 (B4)'],
    ['compaction threshold', b.compactionThreshold, '75 % of capacity − reserved output, or explicit (H5)'],
    ['summary input budget', b.summaryInputBudget, 'window − (window/8 + 512) − prefix (L1)'],
    ['continuity tail', b.continuityTailTokens, 'min(20,000, window × retainRatio), ≥ 1,024 (L7)'],
  ];
  const w = Math.max(...rows.map(([, v]) => fmt(v).length));
  return rows.map(([k, v, why]) => `${k.padEnd(21)} ${fmt(v).padStart(w)}  ${why}`).join('\n');
}

const help = `Usage: compactor plan [limit flags] [--json]

Shows the budgets Compactor derives from the context limits: capacity, history budget,
local clearing trigger, evidence budget, compaction threshold, summary input budget and
continuity tail. Unknown values print as "unknown" (null in JSON).

Flags:
${LIMIT_FLAGS_HELP}
  --json                print the budgets as JSON

Example:
  compactor plan --capacity 32000 --reserved-output 4000 --prefix-tokens 2000`;

/** `compactor plan`: resolve and print budgets (B1–B4, H5, L1, L7). */
export const planCommand: Command = {
  name: 'plan',
  summary: 'show the token budgets derived from context limits',
  help,
  options: { ...LIMIT_OPTIONS },
  run(args: ParsedArgs, ctx: CommandContext) {
    if (args.positionals.length > 0)
      throw new UserError(`compactor plan: unexpected argument '${args.positionals[0]}'`);
    const limits = limitsFrom(parseFlags('plan', LimitFlagsSchema, args.values), ctx);
    const budgets = resolveBudgets(limits);
    ctx.stdout.write(
      args.values.json ? `${JSON.stringify(budgets, null, 2)}\n` : `${renderBudgets(budgets, limits)}\n`,
    );
    return Promise.resolve(0);
  },
};

export default planCommand;
