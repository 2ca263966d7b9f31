import type { CommandContext } from './command.js';
import { resolvePath } from './run-options.js';
import { writeOutputFile } from '../io/output-file.js';
import { checkOutputPath } from '../io/output-path.js';
import { fsError } from '../io/fs-errors.js';
import type { Message } from '../messages/message.js';
import {
  defaultExportFormat,
  exportSession,
  parseExportFormat,
  type ExportFormat,
  type ImportedSession,
  type FormatName,
} from '../formats/index.js';

/** A checked `--out` destination. */
export interface OutTarget {
  path: string;
  format: ExportFormat;
}

/**
 * Checks `--out`/`--to` before any work: the format is valid, the path is not the input and
 * its directory exists, so a finished run never fails at the last step.
 */
export function outTarget(
  command: string,
  ctx: CommandContext,
  out: string | undefined,
  to: string | undefined,
  input: { path: string; format: FormatName; sessionDirs?: string[] },
): OutTarget | null {
  const format = to === undefined ? defaultExportFormat(input.format) : parseExportFormat(to);
  if (out === undefined) return null;
  const path = resolvePath(ctx, out);
  checkOutputPath(`${command}: --out`, path, { inputs: [input.path], sessionDirs: input.sessionDirs });
  return { path, format };
}

/** Writes messages to `--out` atomically: the old file or the new one, never a torn one. */
export function writeOut(target: OutTarget, messages: readonly Message[], session: ImportedSession): void {
  try {
    writeOutputFile(
      target.path,
      exportSession([...messages], target.format, { meta: session.meta, id: session.id }),
    );
  } catch (e) {
    throw fsError(target.path, 'write output', e);
  }
}
