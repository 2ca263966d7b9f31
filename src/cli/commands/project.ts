import { z } from 'zod';
import type { Command, CommandContext, ParsedArgs } from '../command.js';
import { singlePositional } from '../positional.js';
import { parseFlags } from '../flags.js';
import { outTarget, writeOut } from '../out-file.js';
import { createEstimator, type Estimator } from '../../estimate/estimator.js';
import type { Message } from '../../messages/message.js';
import { parseExportFormat, parseFormatName, readSessionFile, selectSession } from '../../formats/index.js';
import {
  leadingSystemCount,
  projectRequest,
  COMPACTION,
  resolveSettings,
  type ClearingPolicy,
  type ProjectedRequest,
} from '../../projection/index.js';
import {
  CLEARING_FLAG_SHAPE,
  CLEARING_HELP,
  CLEARING_OPTIONS,
  LIMIT_OPTIONS,
  settingsFrom,
} from '../settings-flags.js';
import { LIMIT_FLAGS_HELP, LimitFlagsSchema } from './plan.js';

const ProjectFlagsSchema = LimitFlagsSchema.extend({
  ...CLEARING_FLAG_SHAPE,
  ...COMPACTION.flagShape,
  from: z.string().optional(),
  session: z.string().optional(),
  out: z.string().min(1, 'expected a file path').optional(),
  to: z.string().optional(),
  json: z.boolean().optional(),
});

/** Estimated tokens of the session's leading system messages: the default prompt prefix. */
function leadingSystemTokens(messages: readonly Message[], est: Estimator): number {
  return est.history(messages.slice(0, leadingSystemCount(messages)));
}

const num = (n: number | null): string => (n === null ? 'unknown' : n.toLocaleString('en-US'));

/** The human report: tokens before → after, why, and a per-tool table. */
function renderReport(
  file: string,
  format: string,
  sessionId: string,
  r: ProjectedRequest,
  policy: ClearingPolicy,
): string {
  const d = r.diagnostics;
  const saved = d.originalTokens > 0 ? Math.round((1 - d.projectedTokens / d.originalTokens) * 100) : 0;
  const lines = [
    `${file} (${format}, session ${sessionId}): ${r.messages.length} messages in the projection`,
    `tokens: ${num(d.originalTokens)} → ${num(d.projectedTokens)} (${saved}% smaller)`,
    `trigger: ${num(d.localTrigger)} tokens (capacity ${num(r.budgets.capacity)}); ${
      d.clearingApplied ? 'reached, clearing ran' : 'clearing did not run'
    }`,
    `evidence window: ${d.evidenceBatches} batch(es), ${num(d.evidenceTokens)} of ${num(d.evidenceBudget)} tokens`,
    `count rule: keep ${policy.keepToolUses} newest tool use(s) + ${policy.keepRecentToolBatches} newest batch(es)`,
    `protected: ${d.protectedBatches} batch(es), ${d.protectedResults} result(s); cleared: ${d.clearedResults} result(s), ${d.clearedInputs} input(s)`,
    `why: ${d.reason}`,
  ];
  if (d.perTool.length > 0) {
    const header = ['tool', 'cleared', 'kept', 'cleared tokens', 'kept tokens'];
    const rows = d.perTool.map((t) => [
      t.tool,
      num(t.cleared),
      num(t.kept),
      num(t.clearedTokens),
      num(t.keptTokens),
    ]);
    const widths = header.map((h, c) => Math.max(h.length, ...rows.map((row) => row[c].length)));
    const line = (cells: string[]) =>
      cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ');
    lines.push('', line(header), ...rows.map(line));
  }
  return lines.join('\n');
}

const help = `Usage: compactor project FILE [limit flags] [clearing flags] [--from FORMAT] [--session ID]
                         [--out FILE] [--to FORMAT] [--config FILE] [--json]

Builds the request projection of a session: tool-call pairing repair, then local
tool-result clearing against the budgets from the limits. Reports tokens before
and after, what was cleared and kept per tool, and why. The input file is never modified.

Limit flags:
${LIMIT_FLAGS_HELP}
                        (default: the estimated tokens of the session's leading
                        system messages)

Clearing flags (config toolResultClearing; normalization runs even with --no-clearing):
${CLEARING_HELP}

Compaction flags (config compaction; accepted so one flag set serves every command, they
shape run and compact, not this projection):
${COMPACTION.help(26)}

Input and output:
  --from FORMAT    input format (default: detected)
  --session ID     session id or 0-based index when the file holds several
  --out FILE       write the projected messages (atomically; must differ from FILE)
  --to FORMAT      output format: openai-chat, anthropic, responses or canonical
                   (default: the input's provider format, else canonical)
  --config FILE    config file (default ./compactor.config.json; flags win)
  --json           print the diagnostics as JSON: file, format, session, messages,
                   projectedMessages, originalTokens, projectedTokens, clearedResults,
                   protectedBatches, protectedResults, clearedInputs, localTrigger,
                   evidenceBudget, clearingApplied, evidenceBatches, evidenceTokens, reason,
                   prefixTokens, budgets, perTool

Example:
  compactor project examples/sessions/django__django-16560.traj.json --preset vtcode \\
    --capacity 32000 --out projected.json`;

/** `compactor project`: project one session and report what clearing did. */
export const command: Command = {
  name: 'project',
  help,
  options: {
    ...LIMIT_OPTIONS,
    ...CLEARING_OPTIONS,
    ...COMPACTION.flagOptions,
    from: { type: 'string' },
    session: { type: 'string' },
    out: { type: 'string' },
    to: { type: 'string' },
  },
  run(args: ParsedArgs, ctx: CommandContext) {
    const { path: file } = singlePositional('project', args.positionals, ctx);
    const flags = parseFlags('project', ProjectFlagsSchema, args.values);
    const from = flags.from === undefined ? undefined : parseFormatName(flags.from);
    if (flags.to !== undefined) parseExportFormat(flags.to);

    const imported = readSessionFile(file, { from });
    // Checked before the projection, so a missing directory or the input itself as --out is a
    // one-line error and not a failure at the last step.
    const target = outTarget('project', ctx, flags.out, flags.to, { path: file, format: imported.format });
    const session = selectSession(imported, flags.session);
    const estimator = createEstimator({ encoding: ctx.config.encoding });
    const { limits, policy } = resolveSettings(settingsFrom(flags, ctx.config), {
      prefixTokens: leadingSystemTokens(session.messages, estimator),
    });
    // The leading system messages are the prefix the history budget leaves room for; they are not
    // counted again as history.
    const result = projectRequest(session.messages, {
      limits,
      policy,
      estimator,
      leadingSystemAsPrefix: true,
    });

    if (target) writeOut(target, result.messages, session);
    if (flags.json) {
      const { perTool, ...rest } = result.diagnostics;
      const report = {
        file,
        format: imported.format,
        session: session.id,
        messages: session.messages.length,
        projectedMessages: result.messages.length,
        ...rest,
        prefixTokens: limits.prefixTokens,
        budgets: result.budgets,
        perTool,
        ...(target ? { out: target.path, outFormat: target.format } : {}),
      };
      ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      ctx.stdout.write(`${renderReport(file, imported.format, session.id, result, policy)}\n`);
      if (target) ctx.stdout.write(`wrote ${target.path} (${target.format})\n`);
    }
    return Promise.resolve(0);
  },
};
