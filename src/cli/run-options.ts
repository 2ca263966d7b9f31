import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import type { CommandContext } from './command.js';
import { singlePositional } from './positional.js';
import { CLEARING_FLAG_SHAPE, CLEARING_HELP, CLEARING_OPTIONS, LIMIT_OPTIONS } from './settings-flags.js';
import {
  INSPECT_FLAG_SHAPE,
  INSPECT_FLAGS_HELP,
  INSPECT_OPTIONS,
  statelySettingsFrom,
  type StatelySettings,
} from './inspect-flags.js';
import { RELIABILITY_FLAG_SHAPE, RELIABILITY_FLAGS_HELP, RELIABILITY_OPTIONS } from './reliability-flags.js';

import { LIMIT_FLAGS_HELP, LimitFlagsSchema } from './commands/plan.js';
import { COMPACTION } from '../projection/index.js';
import { ROUTE } from '../providers/route-settings.js';

/**
 * Flags shared by `compactor run` and `compactor compact` (the main job): route, limits,
 * clearing policy, input/output and inspection. `compact` adds `--instructions`.
 */

/** node:util parseArgs options of `run` (and, plus `instructions`, of `compact`). */
export const RUN_OPTIONS = {
  ...ROUTE.flagOptions,
  ...LIMIT_OPTIONS,
  ...CLEARING_OPTIONS,
  ...COMPACTION.flagOptions,
  hierarchical: { type: 'boolean' },
  from: { type: 'string' },
  session: { type: 'string' },
  'session-dir': { type: 'string' },
  out: { type: 'string' },
  to: { type: 'string' },
  inspect: { type: 'string' },
  ...INSPECT_OPTIONS,
  ...RELIABILITY_OPTIONS,
} as const;

const path = z.string().min(1, 'expected a file path');

/** zod schema of {@link RUN_OPTIONS}; errors name the flag. */
export const RunFlagsSchema = LimitFlagsSchema.extend({
  ...ROUTE.flagShape,
  ...CLEARING_FLAG_SHAPE,
  ...COMPACTION.flagShape,
  hierarchical: z.boolean().optional(),
  from: z.string().optional(),
  session: z.string().min(1, 'expected a session id or index').optional(),
  'session-dir': z.string().min(1, 'expected a directory').optional(),
  out: path.optional(),
  to: z.string().optional(),
  inspect: z.string().min(1, 'expected a file path, "jsonl" or "stately"').optional(),
  json: z.boolean().optional(),
  ...INSPECT_FLAG_SHAPE,
  ...RELIABILITY_FLAG_SHAPE,
});
export type RunFlags = z.infer<typeof RunFlagsSchema>;

/** Flag help shared by both commands (route, limits, clearing, I/O). */
export const RUN_FLAGS_HELP = `Route (config "provider"; flags win):
${ROUTE.help(20)}

Limits (config "limits"; capacity defaults to the model's window from the catalog,
32,000 for offline):
${LIMIT_FLAGS_HELP}
                        (default 0: the session's own system messages count as history)

Clearing (config "toolResultClearing"):
${CLEARING_HELP}

Compaction (config "compaction"):
${COMPACTION.help(26)}
  --hierarchical            summarize in two bands: a short abstract of the older part
                            and a detailed summary of the newer part

Input and output:
  --from FORMAT       input format (default: detected)
  --session ID        session id or 0-based index when the file holds several
  --out FILE          write the result atomically (see below for what is written)
  --to FORMAT         format of --out: openai-chat | anthropic | responses | canonical
                      (default: the input's provider format, else canonical)
  --session-dir DIR   durable store: messages, full-history artifact and
                      thread.compact_boundary event on compaction, snapshots;
                      a session already there is continued when the input starts
                      with its messages; read it back with compactor restore DIR
${RELIABILITY_FLAGS_HELP}
  --inspect[=TARGET]  machine inspection: --inspect (= --inspect=jsonl) writes JSONL to
                      <session-dir or cwd>/inspect.jsonl, --inspect=FILE to FILE,
                      --inspect=stately serves the Stately inspector on 127.0.0.1 and
                      prints the address to open (its UI loads from stately.ai: needs
                      network and a browser); the run waits for it, then goes on
${INSPECT_FLAGS_HELP}
  --config FILE       config file (default ./compactor.config.json; flags win)
  --json              machine-readable report on stdout (fields below)`;

/** Where inspection events go. */
export type InspectTarget = { kind: 'jsonl'; file: string } | ({ kind: 'stately' } & StatelySettings);

/** Resolves `--inspect=TARGET` against the session directory (or the working directory), with the Stately settings. */
export function inspectTarget(
  command: string,
  flags: RunFlags,
  ctx: CommandContext,
): InspectTarget | undefined {
  const value = flags.inspect;
  const stately = statelySettingsFrom(command, flags, ctx.config);
  if (value === undefined) return undefined;
  if (value === 'stately') return { kind: 'stately', ...stately };
  if (value === 'jsonl')
    return { kind: 'jsonl', file: resolve(ctx.cwd, flags['session-dir'] ?? '.', 'inspect.jsonl') };
  return { kind: 'jsonl', file: isAbsolute(value) ? value : resolve(ctx.cwd, value) };
}

/** Resolves a path flag against the working directory. */
export function resolvePath(ctx: CommandContext, p: string): string {
  return isAbsolute(p) ? p : resolve(ctx.cwd, p);
}

/** The single FILE positional, resolved against the working directory (`shown` as typed). */
export function sessionFileArgument(
  command: string,
  positionals: readonly string[],
  ctx: CommandContext,
): { path: string; shown: string } {
  return singlePositional(command, positionals, ctx);
}
