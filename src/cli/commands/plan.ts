import { z } from 'zod';
import type { Command, CommandContext, ParsedArgs } from '../command.js';
import { UserError } from '../../core/errors.js';
import { parseFlags } from '../flags.js';
import {
  CLEARING,
  DEFAULT_EVIDENCE_WINDOW_RATIO,
  isEvidenceWindowRatio,
  LIMITS,
  resolveBudgets,
  resolveSettings,
  type Budgets,
  type Limits,
} from '../../projection/index.js';
import { LIMIT_FLAG_SHAPE, LIMIT_OPTIONS, settingsFrom } from '../settings-flags.js';

/** zod schema of the limit flags (with `--evidence-ratio`); errors name the flag. */
export const LimitFlagsSchema = z.object(LIMIT_FLAG_SHAPE);

/** Help of the limit flags (`--prefix-tokens` last: each command appends its own default on the next line). */
export const LIMIT_FLAGS_HELP = LIMITS.help(22);

/** Limits from flags over config: `limits`, `toolResultClearing`, `compaction`. */
export function limitsFrom(flags: Record<string, unknown>, ctx: CommandContext): Limits {
  return resolveSettings(settingsFrom(flags, ctx.config)).limits;
}

/** The opted-in evidence window ratio, or undefined when the default (half the trigger) is in force. */
function optedInRatio(ratio: number | undefined): number | undefined {
  return isEvidenceWindowRatio(ratio) && ratio !== DEFAULT_EVIDENCE_WINDOW_RATIO ? ratio : undefined;
}

function evidenceFormula(ratio: number | undefined): string {
  const r = optedInRatio(ratio);
  return r === undefined
    ? 'half the local trigger'
    : `local trigger × ${r} (evidence window ratio, opted in; by default half)`;
}

/**
 * The `--json` report: the budgets as they are, plus `evidenceWindowRatio` only when opted in,
 * so the default output keeps exactly its budget fields.
 */
export function budgetsJson(b: Budgets, limits: Limits): Budgets & { evidenceWindowRatio?: number } {
  const r = optedInRatio(limits.evidenceWindowRatio);
  return r === undefined ? b : { ...b, evidenceWindowRatio: r };
}

const fmt = (n: number | null): string => (n === null ? 'unknown' : n.toLocaleString('en-US'));

/**
 * Plain warnings about limits that cannot work: a known capacity that the reserved output and
 * the prefix use up leaves a history budget of 0, so every request would be over budget.
 */
function budgetWarnings(b: Budgets, limits: Limits): string[] {
  if (b.capacity === null || b.historyBudget === null || b.historyBudget > 0) return [];
  return [
    `the reserved output (${fmt(limits.reservedOutput ?? 0)}) and prefix (${fmt(limits.prefixTokens ?? 0)}) ` +
      `leave no room for history in a capacity of ${fmt(b.capacity)}; lower --reserved-output or --prefix-tokens, or raise --capacity`,
  ];
}

/**
 * The human-readable budget table with the formula behind each line, in words a user can
 * follow without reading the code.
 */
export function renderBudgets(b: Budgets, limits: Limits): string {
  const reserved = limits.reservedOutput ?? 0;
  const prefix = limits.prefixTokens ?? 0;
  const rows: Array<[string, number | null, string]> = [
    ['capacity', b.capacity, "the smaller of the provider's limit and the session ceiling"],
    [
      'history budget',
      b.historyBudget,
      `capacity − reserved output ${fmt(reserved)} − prefix ${fmt(prefix)}`,
    ],
    [
      'local trigger',
      b.localTrigger,
      b.historyBudget === null
        ? 'the configured trigger (capacity unknown)'
        : 'the configured trigger, at most 3/5 of the history budget',
    ],
    ['evidence budget', b.evidenceBudget, evidenceFormula(limits.evidenceWindowRatio)],
    ['compaction threshold', b.compactionThreshold, '75 % of capacity − reserved output, or as configured'],
    ['summary input budget', b.summaryInputBudget, 'window − (window/8 + 512) − prefix'],
    ['continuity tail', b.continuityTailTokens, 'window × retain ratio, at most 20,000, at least 1,024'],
  ];
  const w = Math.max(...rows.map(([, v]) => fmt(v).length));
  return rows.map(([k, v, why]) => `${k.padEnd(21)} ${fmt(v).padStart(w)}  ${why}`).join('\n');
}

const help = `Usage: compactor plan [limit flags] [--evidence-ratio R] [--config FILE] [--json]

Shows the budgets Compactor derives from the context limits: capacity, history budget,
local clearing trigger, evidence budget, compaction threshold, summary input budget and
continuity tail. Unknown values print as "unknown" (null in JSON). Takes no FILE. Config
compaction.threshold, .thresholdRatio and .retainRatio also shape the output.

Flags:
${LIMIT_FLAGS_HELP}
                        (default 0)
${CLEARING.help(22, ['evidenceWindowRatio'])}
  --config FILE         config file (default ./compactor.config.json; flags win)
  --json                print the budgets as JSON: capacity, historyBudget, localTrigger,
                        evidenceBudget, compactionThreshold, summaryInputBudget,
                        continuityTailTokens (+ evidenceWindowRatio when opted in,
                        + warnings when the limits leave no room for history)

Example:
  compactor plan --capacity 32000 --reserved-output 4000 --prefix-tokens 2000`;

/** `compactor plan`: resolve and print budgets. */
export const command: Command = {
  name: 'plan',
  help,
  options: { ...LIMIT_OPTIONS },
  run(args: ParsedArgs, ctx: CommandContext) {
    if (args.positionals.length > 0)
      throw new UserError(`plan: unexpected argument '${args.positionals[0]}'`);
    const limits = limitsFrom(parseFlags('plan', LimitFlagsSchema, args.values), ctx);
    const budgets = resolveBudgets(limits);
    const warnings = budgetWarnings(budgets, limits);
    ctx.stdout.write(
      args.values.json
        ? `${JSON.stringify({ ...budgetsJson(budgets, limits), ...(warnings.length > 0 ? { warnings } : {}) }, null, 2)}\n`
        : `${[renderBudgets(budgets, limits), ...warnings.map((w) => `warning: ${w}`)].join('\n')}\n`,
    );
    return Promise.resolve(0);
  },
};
