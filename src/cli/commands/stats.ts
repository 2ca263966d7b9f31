import { z } from 'zod';
import type { Command } from '../command.js';
import {
  CHART_FLAG_SHAPE,
  CHART_HELP,
  CHART_OPTIONS,
  chartTarget,
  writeSessionChart,
} from '../chart-flag.js';
import { flag, parseFlags } from '../flags.js';
import { CLEARING_FLAG_SHAPE, settingsFrom } from '../settings-flags.js';
import { fileArgument } from './import.js';
import { createEstimator } from '../../estimate/estimator.js';
import {
  parseFormatName,
  readSessionFile,
  selectSession,
  type ImportedSession,
} from '../../formats/index.js';
import { UserError } from '../../core/errors.js';
import { OFFLINE_CONTEXT_WINDOW } from '../../session/route.js';
import { computeSessionStats, type SessionStats } from '../../stats/index.js';

const FlagsSchema = z.object({
  ...CHART_FLAG_SHAPE,
  capacity: flag.posInt.optional(),
  preset: CLEARING_FLAG_SHAPE.preset,
  from: z.string().optional(),
  session: z.string().min(1, 'expected a session id, index or "all"').optional(),
  json: z.boolean().optional(),
});

const n = (v: number): string => v.toLocaleString('en-US');

/** Renders rows as an aligned table: text columns (`textColumns`) left-aligned, numbers right-aligned. */
function table(header: string[], rows: string[][], textColumns = 1): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) =>
    r
      .map((c, i) => (i < textColumns ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].map((l) => `  ${l}`);
}

function render(session: ImportedSession, s: SessionStats, heading: string): string {
  const r = s.byRole;
  const t = s.tokens.byRole;
  const row = (label: string, text: string) => `  ${label.padEnd(22)}${text}`;
  const out = [
    heading,
    row(
      'messages',
      `${n(s.messages)}  (system ${n(r.system)}, user ${n(r.user)}, assistant ${n(r.assistant)}, tool ${n(r.tool)})`,
    ),
    row(
      'tool calls',
      `${n(s.toolCalls)}  results ${n(s.toolResults)}, paired ${n(s.pairedCalls)}, unmatched calls ${n(s.unmatchedCalls)}, orphan results ${n(s.orphanResults)}`,
    ),
    row('batches', `${n(s.batches)}  parallel ${n(s.parallelBatches)}, max fan-out ${n(s.maxFanOut)}`),
    row(
      `tokens (${s.tokens.encoding})`,
      `${n(s.tokens.total)}  (system ${n(t.system)}, user ${n(t.user)}, assistant ${n(t.assistant)}, tool ${n(t.tool)})`,
    ),
  ];
  if (s.largestResults.length > 0) {
    out.push('', `Largest tool results (top ${s.largestResults.length})`);
    out.push(
      ...table(
        ['tool', 'call id', 'message', 'tokens', 'chars'],
        s.largestResults.map((x) => [x.tool, x.callId, `#${x.index}`, n(x.tokens), n(x.chars)]),
        2,
      ),
    );
  }
  if (s.tools.length > 0) {
    out.push('', 'Per tool');
    out.push(
      ...table(
        ['tool', 'calls', 'results', 'call tokens', 'result tokens', 'largest'],
        s.tools.map((x) => [
          x.tool,
          n(x.calls),
          n(x.results),
          n(x.callTokens),
          n(x.resultTokens),
          n(x.largestResultTokens),
        ]),
      ),
    );
  }
  if (session.meta.sidechain === true) out.splice(1, 0, '  (sidechain: a subagent conversation)');
  return out.join('\n');
}

/** `compactor stats`: counts, pairing, batches and token estimates of a session file. */
export const command: Command = {
  name: 'stats',
  help: `Usage: compactor stats FILE [--from FORMAT] [--session ID|all] [--config FILE] [--json]
                       [--chart FILE.svg [--capacity N]]

Imports FILE (format detected, or --from) and reports: messages by role; tool calls,
results and pairing (unmatched calls, orphan results); batches, parallel batches and max
fan-out; token estimates by role; the 5 largest tool results; a per-tool table.

  --from FORMAT   see compactor import --help
  --session ID    session id or 0-based index, or "all" (default: the main session with most messages)
  --config FILE   config file (default ./compactor.config.json; its encoding is used)
${CHART_HELP}
  --capacity N    context window the chart assumes (config limits.capacity, else 32,000,
                  the offline route's window); clearing settings come from the config
  --preset NAME   clearing preset the chart assumes: compactor (the default) or vtcode
  --json          machine-readable: {file, format, sessionCount, sessions: [{id, sidechain,
                  messages, byRole, toolCalls, toolResults, pairedCalls, unmatchedCalls,
                  orphanResults, batches, parallelBatches, maxFanOut, tokens, largestResults,
                  tools}]}

Examples:
  compactor stats examples/sessions/claude-code-orchestrator.jsonl
  compactor stats examples/sessions/claude-code-orchestrator.jsonl --session all --json
  compactor stats examples/sessions/django__django-16560.traj.json --chart django.svg`,
  options: {
    from: { type: 'string' },
    session: { type: 'string' },
    capacity: { type: 'string' },
    preset: { type: 'string' },
    ...CHART_OPTIONS,
  },
  async run(args, ctx) {
    const flags = parseFlags('stats', FlagsSchema, args.values);
    const { path, shown } = fileArgument('stats', args, ctx);
    const from = flags.from !== undefined ? parseFormatName(flags.from) : undefined;
    const result = readSessionFile(path, { from, displayName: shown });
    const sessions = flags.session === 'all' ? result.sessions : [selectSession(result, flags.session)];
    const estimator = createEstimator({ encoding: ctx.config.encoding });
    if (flags.chart !== undefined) {
      if (sessions.length !== 1)
        throw new UserError('stats: --chart: draws one session; pick it with --session ID');
      const settings = settingsFrom({ preset: flags.preset }, ctx.config);
      const capacity = flags.capacity ?? settings.limits.capacity ?? OFFLINE_CONTEXT_WINDOW;
      await writeSessionChart(
        chartTarget('stats', ctx, flags.chart),
        {
          messages: sessions[0].messages,
          title: `${shown} — tokens per turn (window ${capacity.toLocaleString('en-US')})`,
        },
        { ...settings, limits: { ...settings.limits, capacity }, estimator },
      );
    }
    const stats = sessions.map((s) => ({
      session: s,
      stats: computeSessionStats(s.messages, { estimator }),
    }));
    if (flags.json) {
      const report = {
        file: shown,
        format: result.format,
        sessionCount: result.sessions.length,
        sessions: stats.map(({ session, stats: s }) => ({
          id: session.id,
          sidechain: session.meta.sidechain === true,
          ...s,
        })),
      };
      ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return 0;
    }
    const blocks = stats.map(({ session, stats: s }) => {
      const index = result.sessions.indexOf(session);
      return render(
        session,
        s,
        `${shown} — ${result.format}, session ${session.id} (${index + 1} of ${result.sessions.length})`,
      );
    });
    ctx.stdout.write(`${blocks.join('\n\n')}\n`);
    return 0;
  },
};
