import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { Command, CommandContext, ParsedArgs } from '../command.js';
import { singlePositional } from '../positional.js';
import { parseFlags } from '../flags.js';
import { writeOutputFile } from '../../io/output-file.js';
import { checkOutputPath } from '../../io/output-path.js';
import { fsError } from '../../io/fs-errors.js';
import {
  defaultExportFormat,
  exportSession,
  FORMAT_NAMES,
  parseExportFormat,
  parseFormatName,
  readSessionFile,
  selectSession,
} from '../../formats/index.js';

/** The registry's format names for `--from`, wrapped at 64 columns under the flag's text. */
function formatNamesHelp(): string {
  const lines: string[] = [];
  for (const name of FORMAT_NAMES) {
    const last = lines.length - 1;
    if (last >= 0 && lines[last].length + 2 + name.length <= 64) lines[last] += `, ${name}`;
    else lines.push(name);
  }
  return lines.join(',\n                  ');
}

const FlagsSchema = z.object({
  from: z.string().optional(),
  to: z.string().optional(),
  out: z.string().min(1, 'expected a file path').optional(),
  session: z.string().min(1, 'expected a session id or index').optional(),
  json: z.boolean().optional(),
});

/** The single FILE positional of a command, resolved against the working directory. */
export function fileArgument(
  command: string,
  args: ParsedArgs,
  ctx: CommandContext,
): { path: string; shown: string } {
  return singlePositional(command, args.positionals, ctx);
}

/** `compactor import`: converts a session file to a provider format or the canonical one. */
export const command: Command = {
  name: 'import',
  help: `Usage: compactor import FILE [--from FORMAT] [--to FORMAT] [--out FILE] [--session ID]
                        [--config FILE] [--json]

Reads a session (format detected, or --from), picks one session and writes its messages.

  --from FORMAT   ${formatNamesHelp()}
  --to FORMAT     openai-chat | anthropic | responses | canonical
                  (default: provider formats keep their format, transcripts → canonical)
  --out FILE      write there atomically instead of stdout
  --session ID    session id or 0-based index (default: the main session with most messages)
  --config FILE   config file (default ./compactor.config.json)
  --json          print a JSON report instead of the messages: file, format, to, session,
                  out, bytes, sessions [{id, messages, toolCalls, toolResults, sidechain}]

Bad input fails with one line naming the file, line or entry and field; exit code 2.

Examples:
  compactor import examples/sessions/claude-code-orchestrator.jsonl --to anthropic --out request.json
  compactor import examples/sessions/claude-code-orchestrator.jsonl --session 1 --json`,
  options: {
    from: { type: 'string' },
    to: { type: 'string' },
    out: { type: 'string' },
    session: { type: 'string' },
  },
  async run(args, ctx) {
    const flags = parseFlags('import', FlagsSchema, args.values);
    const { path, shown } = fileArgument('import', args, ctx);
    const from = flags.from !== undefined ? parseFormatName(flags.from) : undefined;
    const to = flags.to !== undefined ? parseExportFormat(flags.to) : undefined;
    const result = readSessionFile(path, { from, displayName: shown });
    const session = selectSession(result, flags.session);
    const target = to ?? defaultExportFormat(result.format);
    const text = exportSession(session.messages, target, { meta: session.meta, id: session.id });
    let outPath: string | undefined;
    if (flags.out !== undefined) {
      outPath = isAbsolute(flags.out) ? flags.out : resolve(ctx.cwd, flags.out);
      checkOutputPath('import: --out', outPath, { inputs: [path] });
      try {
        writeOutputFile(outPath, text);
      } catch (e) {
        throw fsError(flags.out, 'write output', e);
      }
    }
    if (flags.json) {
      const report = {
        file: shown,
        format: result.format,
        to: target,
        session: session.id,
        out: flags.out ?? null,
        bytes: Buffer.byteLength(text),
        sessions: result.sessions.map((s) => ({
          id: s.id,
          messages: s.messages.length,
          toolCalls: s.messages.reduce((n, m) => n + (m.toolCalls?.length ?? 0), 0),
          toolResults: s.messages.filter((m) => m.role === 'tool').length,
          sidechain: s.meta.sidechain === true,
        })),
      };
      ctx.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else if (flags.out !== undefined) {
      ctx.stdout.write(
        `${shown}: ${result.format}, session ${session.id} (${session.messages.length} messages) → ${flags.out} (${target})\n`,
      );
    } else ctx.stdout.write(text);
    return 0;
  },
};
