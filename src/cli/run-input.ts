import type { CommandContext, ParsedArgs } from './command.js';
import {
  parseFormatName,
  readSessionFile,
  selectSession,
  type FormatName,
  type ImportedSession,
} from '../formats/index.js';
import { checkInspectPath } from './run-inspection.js';
import { resolvePath, sessionFileArgument, type RunFlags } from './run-options.js';
import { outTarget, type OutTarget } from './out-file.js';
import { inspectReport, type IoReport } from './run-report.js';
import { loadRunTokenizer, type RunSession } from './run-session.js';

/** The input of `run`/`compact` and its checked outputs. */
export interface RunInput {
  /** As the user typed it (reports show this). */
  shown: string;
  format: FormatName;
  /** The selected session of the file. */
  input: ImportedSession;
  out: OutTarget | null;
}

/**
 * Reads FILE (the selected session) and checks every output before the session opens its
 * store, so nothing is committed when an output could not be written.
 */
export function readRunInput(
  command: string,
  flags: RunFlags,
  args: ParsedArgs,
  ctx: CommandContext,
): RunInput {
  const { path, shown } = sessionFileArgument(command, args.positionals, ctx);
  const from = flags.from === undefined ? undefined : parseFormatName(flags.from);
  loadRunTokenizer(flags, ctx);
  const imported = readSessionFile(path, { from, displayName: shown });
  const input = selectSession(imported, flags.session);
  const sessionDirs = flags['session-dir'] === undefined ? [] : [resolvePath(ctx, flags['session-dir'])];
  const out = outTarget(command, ctx, flags.out, flags.to, { path, format: imported.format, sessionDirs });
  checkInspectPath(command, flags, ctx, [path], sessionDirs);
  return { shown, format: imported.format, input, out };
}

/** The report fields about input and outputs; `written` says whether `--out` was written. */
export function ioReport(
  run: RunSession,
  input: RunInput,
  written: boolean,
  boundary: { id: string } | null,
): IoReport {
  return {
    file: input.shown,
    format: input.format,
    session: input.input.id,
    out: input.out && written ? input.out.path : null,
    outFormat: input.out && written ? input.out.format : null,
    sessionDir: run.sessionDir,
    boundary: boundary?.id ?? null,
    inspect: inspectReport(run.inspection.target),
  };
}
