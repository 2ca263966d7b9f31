import type { Command, CommandContext, ParsedArgs } from '../command.js';
import { oneLine } from '../../core/text.js';
import { parseFlags } from '../flags.js';
import { throwIfInterrupted } from '../interrupt.js';
import { redactSecrets } from '../../core/redact.js';
import {
  CHART_FLAG_SHAPE,
  CHART_HELP,
  CHART_OPTIONS,
  chartTarget,
  writeSessionChart,
} from '../chart-flag.js';
import { RUN_FLAGS_HELP, RUN_OPTIONS, RunFlagsSchema } from '../run-options.js';
import { failureLine, renderRunReport, routeReport, type RunJsonReport } from '../run-report.js';
import { ioReport, readRunInput, type RunInput } from '../run-input.js';
import { openRunSession, type RunSession } from '../run-session.js';
import { writeOut } from '../out-file.js';
import type { SessionTurnResult } from '../../session/index.js';

const help = `Usage: compactor run FILE [route flags] [limit flags] [clearing flags] [--threshold N]
                     [--hierarchical] [--out FILE] [--session-dir DIR] [--inspect[=TARGET]] [--json]
                     [--chart FILE.svg]

The main job: runs one automatic turn over a session, without an agent attached: take in
the messages → repair the tool-call pairing of the request → clear old tool results →
estimate how full the context window is → compact the full history only when that reaches
the threshold (with the route's strategy: the provider's own compaction endpoint, its
inline compaction, or a summary written by the model). Reports the decision, the
strategy (and why it fell back), summary calls, token estimates before clearing / after
clearing / after compaction, item counts, pressure, threshold and elapsed time.
The input file is never modified. Without --provider the embedded offline summarizer runs
(deterministic, no network, no key; context window 32,000 tokens unless --capacity).

${RUN_FLAGS_HELP}
${CHART_HELP}

--out writes the next request window (the projection after the turn). On a failed
compaction (exit 1) nothing is written to --out and no boundary is recorded.

JSON fields (--json): command "run", file, format, session, route {name, kind, model,
baseUrl, apiKeyEnv, baseUrlEnv, strategy, strategyReason, offNativeHost, http
{timeoutMs, retries, retryBudgetMs} or null offline}, decision (below-threshold | cleared | compacted |
unchanged | failed | guarded), guardReason, strategy (that ran, or null), fallbackReason
(no-compaction | rejected-edit | null-content | inline-error | null), summaryCalls
(every provider request, repair requests included), repairRequests, warnings and
missingSections (summaries accepted without every template section), receipt
{items [{kind, key, line, place (kept | summary | pointer | amended)}], amended,
tokensBefore, tokensAfter} | null, summaryCache {request (prefix | fork), fallback,
calls, inputTokens, cachedTokens, share} | null, tokens
{beforeClearing, afterClearing, afterCompaction}, clearing {clearedResults,
protectedBatches, protectedResults, clearedInputs}, clearedToFit (the request was
over the window and was made to fit), fit {tokensBefore, tokensAfter, clearedResults,
previewedResults, droppedMessages} | null, items {before, after},
pressureTokens (the decision's), finalPressureTokens (next request), thresholdTokens,
capacity, elapsedMs, failure {reason, message} | null, out, outFormat, sessionDir,
boundary, inspect.

Exit codes: 0 done (also below-threshold and unchanged), 1 compaction failed (bounded
cause on stderr), 2 bad flag, input or route (unknown provider, missing key, bad catalog).
Progress goes to stderr only when it is a terminal.

Examples (the first two need no network or key; ollama needs a local server):
  compactor run examples/sessions/django__django-16560.traj.json
  S=examples/sessions/django__django-16560.traj.json
  compactor run $S --session-dir .compactor/s1 --inspect --out next.json
  OPENAI_API_KEY=… compactor run $S --provider openai --model gpt-5.4 --json
  ANTHROPIC_API_KEY=… compactor run $S --provider anthropic --model claude-sonnet-4-6
  compactor run $S --provider ollama --model qwen3:8b --capacity 32768`;

/** `compactor run`: one headless automatic turn over a session file. */
export const command: Command = {
  name: 'run',
  help,
  options: { ...RUN_OPTIONS, ...CHART_OPTIONS },
  bareFlagValues: { '--inspect': '--inspect=jsonl' },
  abortable: true,
  async run(args: ParsedArgs, ctx: CommandContext) {
    const flags = parseFlags('run', RunFlagsSchema.extend(CHART_FLAG_SHAPE), args.values);
    const io = readRunInput('run', flags, args, ctx);
    const chartPath = flags.chart === undefined ? undefined : chartTarget('run', ctx, flags.chart);
    const run = openRunSession('run', flags, ctx, io.input);
    try {
      await run.inspection.start();
      // --out is written before the boundary commit: a failing write leaves the directory as it was.
      const result = await run.session.runTurn({
        signal: ctx.signal,
        beforeCommit: (r) => {
          if (io.out && r.request !== null) writeOut(io.out, r.request, io.input);
        },
      });
      await run.inspection.close();
      // Ctrl-C / SIGTERM cancelled the turn; the session kept nothing of it.
      if (result.decision === 'cancelled') throwIfInterrupted(ctx.signal);
      const report = runReport(run, io, result);
      if (chartPath !== undefined)
        await writeSessionChart(
          chartPath,
          {
            messages: io.input.messages,
            title: `${io.shown} — tokens per turn (window ${run.session.budgets.capacity ?? '?'})`,
          },
          {
            ...run.settings,
            limits: { ...run.settings.limits, capacity: run.session.limits.capacity },
            estimator: run.session.estimator,
          },
        );
      const text = flags.json ? JSON.stringify(report, null, 2) : renderRunReport(report);
      ctx.stdout.write(`${redactSecrets(text, ctx.env)}\n`);
      if (result.decision !== 'failed') return 0;
      ctx.stderr.write(`compactor: run: ${redactSecrets(oneLine(failureLine(report.failure)), ctx.env)}\n`);
      return 1;
    } finally {
      run.close(); // a run that did not finish commits nothing
    }
  },
};

/** The `run` report (--json fields) of one turn. */
function runReport(run: RunSession, io: RunInput, result: SessionTurnResult): RunJsonReport {
  const failed = result.decision === 'failed';
  const prefix = Math.max(0, run.session.limits.prefixTokens ?? 0);
  return {
    command: 'run',
    ...ioReport(run, io, !failed, result.boundary),
    route: routeReport(run.session.route),
    decision: result.decision,
    guardReason: result.guardReason,
    strategy: result.strategy,
    fallbackReason: result.fallbackReason,
    summaryCalls: result.summaryCalls,
    repairRequests: result.repairRequests,
    warnings: result.warnings,
    receipt: result.compaction?.receipt ?? null,
    summaryCache: result.summaryCache,
    missingSections: result.missingSections,
    tokens: result.tokens,
    clearing: result.clearing,
    clearedToFit: result.clearedToFit,
    fit: result.fit,
    items: result.items,
    pressureTokens: result.tokens.afterClearing === null ? null : result.tokens.afterClearing + prefix,
    finalPressureTokens: result.pressureTokens,
    thresholdTokens: result.thresholdTokens,
    capacity: run.session.budgets.capacity,
    elapsedMs: result.elapsedMs,
    failure: result.compaction?.failure ?? null,
  };
}
