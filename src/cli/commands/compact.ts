import { z } from 'zod';
import type { Command, CommandContext, ParsedArgs } from '../command.js';
import { oneLine } from '../../core/text.js';
import { parseFlags } from '../flags.js';
import { redactSecrets } from '../../core/redact.js';
import { RUN_FLAGS_HELP, RUN_OPTIONS, RunFlagsSchema } from '../run-options.js';
import {
  CACHE_NOTE,
  failureLine,
  renderCompactReport,
  routeReport,
  type CompactJsonReport,
} from '../run-report.js';
import { ioReport, readRunInput, type RunInput } from '../run-input.js';
import { openRunSession, type RunSession } from '../run-session.js';
import { writeOut } from '../out-file.js';
import type { Message } from '../../messages/message.js';
import type { SessionCompactionReport } from '../../session/index.js';

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
baseUrl, apiKeyEnv, baseUrlEnv, strategy, strategyReason, offNativeHost, http
{timeoutMs, retries, retryBudgetMs} or null offline}, status (compacted | unchanged | failed),
mode "manual", strategy, requestedStrategy, fallbackReason, summaryCalls (every
provider request, repair requests included), repairRequests, warnings and
missingSections (summaries accepted without every template section), receipt
{items [{kind, key, line, place (kept | summary | pointer | amended)}], amended,
tokensBefore, tokensAfter} | null, summaryCache {request (prefix | fork), fallback, calls,
inputTokens, cachedTokens, share} | null,
items {before, after}, tokens {before, after}, elapsedMs, failure {reason, message} | null,
note (the prompt-cache note on success), out, outFormat, sessionDir, boundary, inspect.

Exit codes: 0 compacted or unchanged, 1 compaction failed, 2 bad flag, input or route.

Examples (the first two need no network or key):
  compactor compact examples/sessions/django__django-16560.traj.json --out compacted.json
  S=examples/sessions/django__django-16560.traj.json
  compactor compact $S --instructions "keep every failing test name" --json
  OPENAI_API_KEY=… compactor compact $S --provider openai --model gpt-5.4 \\
    --session-dir .compactor/s1`;

/** `compactor compact`: the manual /compact over a session file. */
export const command: Command = {
  name: 'compact',
  help,
  options: { ...RUN_OPTIONS, instructions: { type: 'string' } },
  bareFlagValues: { '--inspect': '--inspect=jsonl' },
  abortable: true,
  async run(args: ParsedArgs, ctx: CommandContext) {
    const flags = parseFlags('compact', CompactFlagsSchema, args.values);
    const io = readRunInput('compact', flags, args, ctx);
    const run = openRunSession('compact', flags, ctx, io.input);
    try {
      await run.inspection.start();
      const before = run.session.history;
      // --out is written before the boundary commit: a failing write leaves the directory as it was.
      // Ctrl-C / SIGTERM rejects with the interruption; the session keeps nothing of the pass.
      const result = await run.session.compact({
        signal: ctx.signal,
        mode: 'manual',
        instructions: flags.instructions,
        beforeCommit: (outcome) => {
          if (io.out && outcome.status === 'compacted') writeOut(io.out, outcome.history, io.input);
        },
      });
      await run.inspection.close();
      const report = compactReport(run, io, result, before);
      const text = flags.json ? JSON.stringify(report, null, 2) : renderCompactReport(report);
      ctx.stdout.write(`${redactSecrets(text, ctx.env)}\n`);
      if (result.status !== 'failed') return 0;
      ctx.stderr.write(
        `compactor: compact: ${redactSecrets(oneLine(failureLine(result.failure)), ctx.env)}\n`,
      );
      return 1;
    } finally {
      run.close(); // a run that did not finish commits nothing
    }
  },
};

/** The `compact` report (--json fields) of one pass over `before`. */
function compactReport(
  run: RunSession,
  io: RunInput,
  result: SessionCompactionReport,
  before: readonly Message[],
): CompactJsonReport {
  const compacted = result.status === 'compacted';
  const estimator = run.session.estimator;
  return {
    command: 'compact',
    ...ioReport(run, io, compacted, result.boundary),
    route: routeReport(run.session.route),
    status: result.status,
    mode: result.mode,
    strategy: result.strategy,
    requestedStrategy: result.requestedStrategy,
    fallbackReason: result.fallbackReason,
    summaryCalls: result.summaryCalls,
    repairRequests: result.repairRequests,
    warnings: result.warnings,
    receipt: result.receipt,
    summaryCache: result.summaryCache,
    missingSections: result.missingSections,
    nothingToCompact: result.nothingToCompact,
    items: { before: result.itemsBefore, after: result.itemsAfter },
    tokens: { before: estimator.history(before), after: estimator.history(run.session.history) },
    elapsedMs: result.elapsedMs,
    failure: result.failure,
    note: compacted ? CACHE_NOTE : null,
  };
}
