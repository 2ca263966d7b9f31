import { z } from 'zod';
import type { Command, CommandContext, ParsedArgs } from '../command.js';
import { oneLine } from '../../core/text.js';
import { parseFlags } from '../flags.js';
import { redactSecrets } from '../../core/redact.js';
import { RUN_FLAGS_HELP, RUN_OPTIONS, RunFlagsSchema, sessionFileArgument } from '../run-options.js';
import {
  CACHE_NOTE,
  failureLine,
  inspectReport,
  renderCompactReport,
  routeReport,
  type CompactJsonReport,
} from '../run-report.js';
import { resolvePath } from '../run-options.js';
import { checkInspectPath } from '../run-inspection.js';
import { openRunSession } from '../run-session.js';
import { outTarget, writeOut } from '../out-file.js';
import { parseFormatName, readSessionFile, selectSession } from '../../formats/index.js';

const CompactFlagsSchema = RunFlagsSchema.extend({
  instructions: z
    .string()
    .refine((s) => s.trim() !== '', 'expected instruction text')
    .optional(),
});

const help = `Usage: compactor compact FILE [--instructions TEXT] [route flags] [limit flags]
                         [--out FILE] [--session-dir DIR] [--inspect[=TARGET]] [--json]

The manual /compact: always compacts the FULL session history with the route's strategy
(the provider's own compaction endpoint, its inline compaction, or a summary written by
the model; mode manual), however full the window is. Reports elapsed time, mode, context
items before → after, strategy, and notes that the next request may reuse less of the
provider prompt cache.
On failure the exit code is 1, the history is unchanged, --out is not written and
stderr gets one bounded line naming the cause (provider/model, HTTP status, code) — never
the provider's JSON body or an API key.

  --instructions TEXT   custom compaction instructions: appended to the Local summary
                        prompt, sent as "instructions" to the provider's /responses/compact

${RUN_FLAGS_HELP}

--out writes the compacted session history. Clearing flags and --threshold only matter for
the budgets; manual compaction always runs.

JSON fields (--json): command "compact", file, format, session, route {name, kind, model,
baseUrl, apiKeyEnv, strategy, strategyReason, http {timeoutMs, retries,
retryBudgetMs} or null offline}, status (compacted | unchanged | failed),
mode "manual", strategy, requestedStrategy, fallbackReason, summaryCalls,
items {before, after}, tokens {before, after}, elapsedMs, failure {reason, message} | null,
note (the prompt-cache note on success), out, outFormat, sessionDir, boundary, inspect.

Exit codes: 0 compacted or unchanged, 1 compaction failed, 2 bad flag, input or route.

Examples (the first two need no network or key):
  compactor compact examples/sessions/django__django-16560.traj.json --out compacted.json
  S=examples/sessions/django__django-16560.traj.json
  compactor compact $S --instructions "keep every failing test name" --json
  OPENAI_API_KEY=… compactor compact $S --provider openai --model gpt-5.4 \\
    --session-dir .compactor/s1`;

/** `compactor compact`: the manual /compact over a session file (S1–S4, R1). */
export const compactCommand: Command = {
  name: 'compact',
  help,
  options: { ...RUN_OPTIONS, instructions: { type: 'string' } },
  bareFlagValues: { '--inspect': '--inspect=jsonl' },
  async run(args: ParsedArgs, ctx: CommandContext) {
    const flags = parseFlags('compact', CompactFlagsSchema, args.values);
    const { path, shown } = sessionFileArgument('compact', args.positionals, ctx);
    const from = flags.from === undefined ? undefined : parseFormatName(flags.from);
    const imported = readSessionFile(path, { from, displayName: shown });
    const input = selectSession(imported, flags.session);
    // Every output is checked before the session opens its store (nothing committed yet).
    const sessionDirs = flags['session-dir'] === undefined ? [] : [resolvePath(ctx, flags['session-dir'])];
    const out = outTarget('compact', ctx, flags.out, flags.to, {
      path,
      format: imported.format,
      sessionDirs,
    });
    checkInspectPath('compact', flags, ctx, [path], sessionDirs);

    const run = openRunSession('compact', flags, ctx, input);
    try {
      await run.inspection.start();
      const before = run.session.history;
      // --out is written before the boundary commit: a failing write leaves the directory as it was.
      const result = await run.session.compact({
        mode: 'manual',
        instructions: flags.instructions,
        beforeCommit: (outcome) => {
          if (out && outcome.status === 'compacted') writeOut(out, outcome.history, input);
        },
      });
      run.inspection.close();
      const compacted = result.status === 'compacted';
      const estimator = run.session.estimator;
      const report: CompactJsonReport = {
        command: 'compact',
        file: shown,
        format: imported.format,
        session: input.id,
        route: routeReport(run.session.route),
        status: result.status,
        mode: result.mode,
        strategy: result.strategy,
        requestedStrategy: result.requestedStrategy,
        fallbackReason: result.fallbackReason,
        summaryCalls: result.summaryCalls,
        items: { before: result.itemsBefore, after: result.itemsAfter },
        tokens: { before: estimator.history(before), after: estimator.history(run.session.history) },
        elapsedMs: result.elapsedMs,
        failure: result.failure,
        note: compacted ? CACHE_NOTE : null,
        out: out && compacted ? out.path : null,
        outFormat: out && compacted ? out.format : null,
        sessionDir: run.sessionDir,
        boundary: result.boundary?.id ?? null,
        inspect: inspectReport(run.inspection.target),
      };
      const text = flags.json ? JSON.stringify(report, null, 2) : renderCompactReport(report);
      ctx.stdout.write(`${redactSecrets(text, ctx.env)}\n`);
      if (result.status === 'failed') {
        ctx.stderr.write(
          `compactor: compact: ${redactSecrets(oneLine(failureLine(result.failure)), ctx.env)}\n`,
        );
        return 1;
      }
      return 0;
    } finally {
      run.close(); // a run that did not finish commits nothing
    }
  },
};

export default compactCommand;
