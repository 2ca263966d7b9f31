import { dirname, isAbsolute, resolve } from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { z } from 'zod';
import { UserError } from '../core/errors.js';
import type { Estimator } from '../estimate/estimator.js';
import { refuseSpecialOutput, writeOutputFile } from '../io/output-file.js';
import type { Message } from '../messages/message.js';
import type { SettingsInput } from '../projection/index.js';
import type { CommandContext } from './command.js';

/** parseArgs option of `--chart FILE` (`stats`, `run`). */
export const CHART_OPTIONS = { chart: { type: 'string' } } as const;

/** zod shape of {@link CHART_OPTIONS}: an `.svg` file name. */
export const CHART_FLAG_SHAPE = {
  chart: z
    .string()
    .min(1, 'expected an SVG file path')
    .regex(/\.svg$/i, 'expected a file name ending in .svg')
    .optional(),
};

/** Help line of `--chart`. */
export const CHART_HELP = `  --chart FILE    also draw tokens per turn before and after projection, the window, the
                  clearing trigger, the compaction threshold, and where clearing and
                  compaction happened (offline summarizer), as an SVG file`;

/**
 * Resolves and checks the `--chart` target before any work: its directory must exist and it
 * must not be a directory. Returns the absolute path.
 */
export function chartTarget(command: string, ctx: Pick<CommandContext, 'cwd'>, file: string): string {
  const path = isAbsolute(file) ? file : resolve(ctx.cwd, file);
  const dir = dirname(path);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UserError(`${command}: --chart: directory not found: ${dirname(file)}`);
  refuseSpecialOutput(`${command}: --chart`, path);
  return path;
}

/**
 * Draws the session chart and writes it atomically to `path` (from {@link chartTarget}); the
 * chart is computed before anything is written, so a failure leaves no partial file.
 */
export async function writeSessionChart(
  path: string,
  session: { messages: readonly Message[]; title: string },
  opts: SettingsInput & { estimator: Estimator },
): Promise<void> {
  // The chart code loads only when a chart is asked for (`run` imports this file for its flag).
  const [{ sessionTimeline }, { sessionChart }] = await Promise.all([
    import('./session-timeline.js'),
    import('../charts/session-chart.js'),
  ]);
  const timeline = await sessionTimeline(session.messages, opts);
  writeOutputFile(path, sessionChart(timeline, session.title));
}
